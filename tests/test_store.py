"""Run directories: round trip through the records, format upgrade, run ids, nothing half-written."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from benchsite.errors import BenchError
from benchsite.model.columns import as_columns, as_rows, read_form, stored_form
from benchsite.model.method import METHOD_DIR
from benchsite.model.portable import inferred_placeholders, make_portable
from benchsite.model.run import FORMAT_VERSION, RUN_FILE, RunDocument
from benchsite.model.run_steps import (
    run_v1_to_v2,
    run_v2_to_v3,
    run_v3_to_v4,
    run_v4_to_v5,
    run_v5_to_v6,
    run_v6_to_v7,
    run_v7_to_v8,
)
from benchsite.model.run_steps_since_v10 import (
    run_v9_to_v10,
    run_v10_to_v11,
    run_v12_to_v13,
    run_v13_to_v14,
    run_v14_to_v15,
    run_v15_to_v16,
)
from benchsite.model.upgrade import (
    overhead_v1_to_v2,
    overhead_v2_to_v3,
    overhead_v3_to_v4,
    published_v1_to_v2,
    read_method,
    read_overhead,
    read_run,
)
from benchsite.records import read_json, read_toml
from benchsite.results.metrics import METRICS
from benchsite.results.store import (
    latest_run,
    list_runs,
    load_run,
    new_run_id,
    staged_run_directory,
    write_json,
    write_text,
)
from benchsite.results.upgrading import upgrade_data_dir
from benchsite.results.view import RunView
from benchsite.tools import parse_report
from benchsite.tools.ab import AbCellRun, parse_ab_output
from benchsite.tools.base import Repetition
from committed import COMMITTED_DATA
from conftest import FIXTURES

REPORT = (FIXTURES / "ab" / "ab-2.3-debian12-cheroot-c10-k.txt").read_text()
RUNS = FIXTURES / "runs"
PUBLISHED_V1 = FIXTURES / "published" / "v1-http-clients.toml"  # http-clients' published.toml as first committed
COMMITTED_CHERRYPY = COMMITTED_DATA / "cherrypy-speed" / "20261122T005146Z-full"


def committed_document() -> RunDocument:
    """The committed cherrypy-speed run (format 3), the base the tests below vary."""
    return load_run(COMMITTED_CHERRYPY)


def write_run(tmp_path: Path, document: dict) -> Path:
    run_dir = tmp_path / "r" / "20260101T000000Z-quick"
    (run_dir / "raw").mkdir(parents=True)
    (run_dir / "raw" / "rep-1.txt").write_text(REPORT)
    write_json(run_dir / RUN_FILE, document)
    return run_dir


def one_cell_document() -> dict:
    """A small run: the committed document cut to one subject, one cell, one good and one failed repetition."""
    document = committed_document().to_json()
    subject = document["subjects"][0]
    cell = subject["cells"][0]
    ok = Repetition(
        index=1,
        argv=("ab", "-k", "-n", "1000"),
        exit_code=0,
        timed_out=False,
        raw_output="raw/rep-1.txt",
        wall_s=0.3,
        load_cpu_s=0.1,
        server_cpu_s=0.2,
        server_cpu_clock="ticks",
        server_system_s=None,
        backend_cpu_s={},
        result=parse_ab_output(REPORT),
        error=None,
        started_after_s=None,
        steal_s=None,
        other_busy_s=None,
        other_busy_clock=None,
        disturbed=False,
        server_memory=None,
        memory_output=None,
    )
    failed = ok.model_copy(
        update={
            "index": 2,
            "exit_code": 119,
            "result": None,
            "raw_output": "raw/rep-2.txt",
            "error": "ab exited with code 119: apr_pollset_poll: The timeout specified has expired (70007)",
        }
    )
    cell["repetitions"] = [ok.to_json(), failed.to_json()]
    subject["cells"] = [cell]
    document["subjects"] = [subject]
    return document


def test_a_stored_run_reads_back_with_the_values_of_its_raw_output(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path, one_cell_document())
    run = load_run(run_dir)
    ok, failed = run.subjects[0].cells[0].repetitions
    assert ok.result == parse_ab_output(run.raw_text(ok))
    assert METRICS["server-cpu"].read(ok) == pytest.approx(0.2 * 1e6 / ok.result.complete_requests)
    assert failed.result is None and failed.exit_code == 119 and not failed.ok
    assert json.loads((run_dir / RUN_FILE).read_text()) == run.to_json()


@pytest.mark.parametrize(
    "fixture",
    ["v1-first-shape-cherrypy-speed.json", "v1-second-shape-wsgi-servers.json", "v1-second-shape-http-clients.json"],
)
def test_both_shapes_of_version_1_upgrade_to_the_current_version(fixture: str) -> None:
    old = json.loads((RUNS / fixture).read_text())
    run = read_run(old, RUNS / fixture)
    assert run.format_version == FORMAT_VERSION == 16
    roles = {"subject": "server", "server": "backend", "ceiling": "ceiling", "client": "client"}
    for before, after in zip(old["subjects"], run.subjects, strict=True):
        assert after.role == roles[before.get("role", "subject")]
        for cell_before, cell_after in zip(before["cells"], after.cells, strict=True):
            assert cell_after.tool == cell_before["tool"] and cell_after.concurrency == cell_before["concurrency"]
            for rep_before, rep_after in zip(cell_before["repetitions"], cell_after.repetitions, strict=True):
                assert rep_after.raw_output == rep_before["raw_output"]
                if rep_before["result"] is not None:
                    assert rep_after.result is not None
                    assert rep_after.result.complete_requests == rep_before["result"]["complete_requests"]
    assert [s.name for s in run.skipped] == [s["name"] for s in old.get("skipped_subjects", [])]


def test_the_committed_runs_are_the_current_version_and_equal_their_upgraded_version_1() -> None:
    text = (RUNS / "v1-first-shape-cherrypy-speed.json").read_text()
    committed = read_json(COMMITTED_CHERRYPY / RUN_FILE)
    assert committed["format_version"] == FORMAT_VERSION
    upgraded = read_run(json.loads(text), RUNS / "v1").to_json()
    assert stored_form(json.loads(make_portable(json.dumps(upgraded), inferred_placeholders(text)))) == committed
    for run_file in sorted((COMMITTED_DATA).glob(f"**/{RUN_FILE}")):
        assert read_json(run_file)["format_version"] == FORMAT_VERSION, run_file


def test_version_5_becomes_6_saying_not_recorded_where_a_collector_left_an_exception_name() -> None:
    version_5 = json.loads((RUNS / "v5-cherrypy-speed.json").read_text())
    version_5["environment"]["git_commit"] = "unknown (CalledProcessError)"  # as two committed runs had it
    version_6 = run_v5_to_v6(version_5)
    assert version_6["environment"]["git_commit"] == "not recorded"
    assert version_6["environment"]["python"] == version_5["environment"]["python"]


def test_version_5_becomes_6_with_no_count_no_counting_plan_and_no_kernel_split() -> None:
    version_5 = json.loads((RUNS / "v5-cherrypy-speed.json").read_text())  # a committed run, frozen at version 5
    assert version_5["format_version"] == 5 and "counting" not in version_5
    version_6 = run_v5_to_v6(version_5)
    assert version_6["format_version"] == 6 and version_6["counting"] is None
    assert version_6["profile"] == {**version_5["profile"], "counting": None}
    for subject_5, subject_6 in zip(version_5["subjects"], version_6["subjects"], strict=True):
        for cell_5, cell_6 in zip(subject_5["cells"], subject_6["cells"], strict=True):
            assert cell_6["repetitions"] == [{**rep, "server_system_s": None} for rep in cell_5["repetitions"]]
    unchanged = ("format_version", "counting", "profile", "subjects", "environment")
    assert {key: value for key, value in version_6.items() if key not in unchanged} == {
        key: value for key, value in version_5.items() if key not in unchanged
    }
    assert read_run(run_v6_to_v7(version_6), RUNS / "v5").counting is None


def test_version_2_becomes_3_in_an_explicit_step_and_3_has_no_defaults_for_it() -> None:
    version_2 = run_v1_to_v2(json.loads((RUNS / "v1-first-shape-cherrypy-speed.json").read_text()))
    assert "topology" not in version_2 and "origins" not in version_2["subjects"][0]
    version_3 = run_v2_to_v3(version_2)
    assert version_3["topology"] is None and version_3["subjects"][0]["origins"] == []
    assert version_3["settings"]["tool_paths"] == {} and "ab_path" not in version_3["settings"]
    rep = version_3["subjects"][0]["cells"][0]["repetitions"][0]
    assert rep["load_cpu_s"] == version_2["subjects"][0]["cells"][0]["repetitions"][0]["tool_cpu_s"]
    assert "tool_cpu_s" not in rep
    machine = version_3["machine"]
    assert machine["name"] == "amd-epyc-2cpu" and machine["fingerprint"]["virtualization"] == "not recorded"
    assert version_3["environment"]["virtualization"] == "not recorded"
    without_topology = {key: value for key, value in version_3.items() if key != "topology"}
    with pytest.raises(BenchError, match="topology is missing"):
        read_run(without_topology, Path("run.json"))


def test_upgrade_data_refuses_a_run_whose_raw_output_was_edited(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(COMMITTED_CHERRYPY, data / "cherrypy-speed" / COMMITTED_CHERRYPY.name)
    run = load_run(data / "cherrypy-speed" / COMMITTED_CHERRYPY.name)
    raw = run.raw_file(run.subjects[0].cells[0].repetitions[0])
    # an edit the report itself cannot catch (its figures still agree with each other): run.json does
    raw.write_text(re.sub(r"Server Software:[^\n]*", "Server Software:        Edited/1.0", raw.read_text()))
    before = run.run_file.read_bytes()
    with pytest.raises(BenchError, match="parses to other figures"):
        upgrade_data_dir(data)
    assert run.run_file.read_bytes() == before  # nothing written


def test_the_upgrade_fills_what_the_first_runs_did_not_record_explicitly() -> None:
    upgraded = run_v1_to_v2(json.loads((RUNS / "v1-first-shape-cherrypy-speed.json").read_text()))
    assert upgraded["settings"]["wrk_path"] == "wrk" and upgraded["skipped"] == []
    assert upgraded["profile"]["cell_requests"] == {} and upgraded["profile"]["warmup_cells"] == []
    assert all(
        rep["result"]["tool"] == "ab" for s in upgraded["subjects"] for c in s["cells"] for rep in c["repetitions"]
    )


def test_an_overhead_record_of_version_1_upgrades_with_the_same_figures() -> None:
    old = json.loads((RUNS / "v1-overhead.json").read_text())
    step = overhead_v1_to_v2(old)  # the step itself: derived medians dropped, the figures kept
    assert step["format_version"] == 2 and "harness_rps_median" not in step
    assert step["harness_rps"] == old["harness_rps"]
    record = read_overhead(old, RUNS / "v1-overhead.json")
    assert record.format_version == 4 and record.environment.virtualization == "not recorded"
    assert record.harness_rps_median == old["harness_rps_median"]
    assert record.difference_percent == pytest.approx(old["difference_percent"])


def test_a_published_file_of_version_1_names_the_clients_cpu_by_the_registrys_name() -> None:
    old = read_toml(PUBLISHED_V1)
    upgraded = published_v1_to_v2(old)
    assert upgraded["format_version"] == 2
    was_cpu = [i for i, claim in enumerate(old["claims"]) if claim.get("metric") == "cpu"]
    assert was_cpu and all(upgraded["claims"][i]["metric"] == "load-cpu" for i in was_cpu)
    assert [c["id"] for c in upgraded["claims"]] == [c["id"] for c in old["claims"]]
    assert upgraded["results"] == old["results"] and upgraded["source"] == old["source"]


def test_upgrade_data_rewrites_an_old_published_file_keeping_its_comments(tmp_path: Path) -> None:
    path = tmp_path / "data" / "http-clients" / "published.toml"
    path.parent.mkdir(parents=True)
    shutil.copy(PUBLISHED_V1, path)
    assert upgrade_data_dir(tmp_path / "data") == [(path, "from format version 1")]
    old_lines, new_lines = PUBLISHED_V1.read_text().splitlines(), path.read_text().splitlines()
    changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert changed[0] == ("format_version = 1", "format_version = 2")
    assert set(changed[1:]) == {('metric = "cpu"', 'metric = "load-cpu"')}
    assert read_toml(path) == published_v1_to_v2(read_toml(PUBLISHED_V1))
    assert upgrade_data_dir(tmp_path / "data") == []  # current now: nothing to do


def test_every_committed_method_record_reads_and_a_newer_one_says_what_to_do(tmp_path: Path) -> None:
    records = sorted((COMMITTED_DATA / METHOD_DIR).glob("*.toml"))
    assert records and all(read_method(path).sets for path in records)
    newer = tmp_path / "newer.toml"
    newer.write_text(records[0].read_text().replace("format_version = 1", "format_version = 2"))
    with pytest.raises(BenchError, match=r"format version 2, but this harness reads versions 1 to 1: update the"):
        read_method(newer)


def test_an_unknown_format_version_says_what_to_do(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path, one_cell_document() | {"format_version": FORMAT_VERSION + 1})
    with pytest.raises(BenchError, match="update the harness"):
        load_run(run_dir)


def test_broken_json_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / RUN_FILE).write_text("{not json")
    with pytest.raises(BenchError, match=r"run\.json: not valid JSON"):
        load_run(tmp_path / "run")


def test_run_ids_sort_by_time_and_two_in_one_second_differ() -> None:
    first, second = new_run_id("full"), new_run_id("full")
    assert re.fullmatch(r"\d{8}T\d{6}\.\d{6}Z-full", first)
    assert first != second and sorted([second, first]) == [first, second]


def test_an_interrupted_run_leaves_no_directory(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), staged_run_directory(tmp_path, "20260101T000000Z-full") as staging:
        (staging / "raw").mkdir()
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_a_recipes_first_run_that_fails_leaves_no_empty_recipe_folder(tmp_path: Path) -> None:
    recipe_dir = tmp_path / "new-recipe"
    with (
        pytest.raises(BenchError, match="cannot write"),
        staged_run_directory(recipe_dir, "20260101T000000Z-full") as staging,
    ):
        (staging / "raw").mkdir()
        (staging / "raw" / "rep-1.txt").mkdir()  # a write that fails as a full disk would
        write_text(staging / "raw" / "rep-1.txt", "report")
    assert not recipe_dir.exists()


def test_a_finished_run_is_renamed_into_place_and_never_overwritten(tmp_path: Path) -> None:
    with staged_run_directory(tmp_path, "20260101T000000Z-full") as staging:
        write_json(staging / RUN_FILE, {"x": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["20260101T000000Z-full"]
    with pytest.raises(BenchError, match="already exists"), staged_run_directory(tmp_path, "20260101T000000Z-full"):
        pass
    assert list_runs(tmp_path) == [tmp_path / "20260101T000000Z-full"]


def test_a_data_dir_that_cannot_be_written_is_a_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(BenchError, match="choose a writable --data-dir"), staged_run_directory(blocker, "x"):
        pass


def test_the_latest_run_is_the_newest_run_id_of_the_profile(tmp_path: Path) -> None:
    for run_id in (
        "20260102T000000Z-full",
        "20260101T000000Z-full",
        "20260103T000000Z-quick",
        ".incomplete-20260104T000000Z-full",
    ):
        (tmp_path / run_id).mkdir()
        (tmp_path / run_id / RUN_FILE).write_text("{}")
    assert latest_run(tmp_path) == tmp_path / "20260103T000000Z-quick"
    assert latest_run(tmp_path, "full") == tmp_path / "20260102T000000Z-full"


@pytest.mark.parametrize("run_file", sorted((COMMITTED_DATA).glob(f"*/*/{RUN_FILE}")), ids=lambda p: p.parent.name)
def test_every_committed_result_equals_its_raw_output_parsed_again(run_file: Path) -> None:
    run = load_run(run_file.parent)
    for subject in run.subjects:
        for cell in subject.cells:
            for rep in cell.repetitions:
                if rep.result is not None:
                    assert rep.result == parse_report(cell.tool, run.raw_text(rep)), rep.raw_output


def test_the_cell_kinds_are_distinct_records() -> None:
    cell = committed_document().subjects[0].cells[0]
    assert isinstance(cell, AbCellRun) and cell.requests == 1000 and not hasattr(cell, "duration_s")


def test_a_hand_edited_machine_field_is_refused() -> None:
    document = committed_document().to_json()
    document["machine"]["fingerprint"]["cpu_count"] = 64  # the id no longer matches
    with pytest.raises(BenchError, match=r"machine id .* is not its fingerprint's"):
        read_run(document, Path("run.json"))


def test_the_upgrade_drops_ssh_logins_and_addresses_of_hosts() -> None:
    two_hosts = COMMITTED_DATA / "wsgi-servers" / "20261122T193141.102960Z-full" / RUN_FILE
    text = two_hosts.read_text()
    assert "root@" not in text and '"ssh"' not in text
    run = load_run(two_hosts.parent)
    assert run.topology is not None and run.topology.server.machine.id == run.machine.id


def test_version_4_becomes_5_with_no_releases_unless_it_named_them() -> None:
    committed = read_json(COMMITTED_CHERRYPY / RUN_FILE)
    version_4 = {**committed, "format_version": 4, "profile": dict(committed["profile"])}
    del version_4["profile"]["releases"]
    assert run_v4_to_v5(version_4)["profile"]["releases"] == []
    swept = {**version_4, "profile": {**version_4["profile"], "releases": ["3.2.4", "18.10.0"]}}
    assert run_v4_to_v5(swept)["profile"]["releases"] == ["3.2.4", "18.10.0"]


def test_version_6_becomes_7_judging_each_repetition_by_the_frozen_default_rule() -> None:
    version_6 = json.loads((RUNS / "v6-cherokee-vs-apache.json").read_text())  # a committed run, frozen at version 6
    assert version_6["format_version"] == 6 and "machine_check" not in version_6
    version_7 = run_v6_to_v7(version_6)
    assert version_7["format_version"] == 7
    assert version_7["machine_check"] is None and version_7["accepted_busy"] is False
    assert version_7["settings"] == {
        **version_6["settings"],
        "disturbed_share": 0.25,
        "disturbed_floor_s": 0.1,
        "busy_share": 0.25,
        "settle_wait_s": 30.0,
    }
    judged = []
    for subject_6, subject_7 in zip(version_6["subjects"], version_7["subjects"], strict=True):
        for cell_6, cell_7 in zip(subject_6["cells"], subject_7["cells"], strict=True):
            for rep_6, rep_7 in zip(cell_6["repetitions"], cell_7["repetitions"], strict=True):
                assert {key: value for key, value in rep_7.items() if key != "disturbed"} == rep_6
                others = rep_6["other_busy_s"] + rep_6["steal_s"]
                assert rep_7["disturbed"] == (others > 0.1 and others > 0.25 * rep_6["wall_s"])
                judged.append(rep_7["disturbed"])
    assert judged.count(True) == 1  # the one repetition of this run that others' work disturbed
    unchanged = ("format_version", "settings", "subjects", "machine_check", "accepted_busy")
    assert {k: v for k, v in version_7.items() if k not in unchanged} == {
        k: v for k, v in version_6.items() if k not in unchanged
    }
    run = read_run(version_7, RUNS / "v6")
    assert RunView(run).disturbed == (1, 45) and not RunView(run).busy


def test_version_7_becomes_8_with_one_word_per_thing_and_nothing_else_changed() -> None:
    version_7 = json.loads((RUNS / "v7-cherrypy-speed.json").read_text())  # a committed run, frozen at version 7
    assert version_7["format_version"] == 7
    version_8 = run_v7_to_v8(version_7)
    assert version_8["format_version"] == 8
    assert version_8["profile"]["rounds"] == version_7["profile"]["repetitions"] == 5
    assert "repetitions" not in version_8["profile"] and "tool_cpu" not in version_8["settings"]
    assert version_8["settings"]["load_cpu"] == version_7["settings"]["tool_cpu"] == 1
    assert list(version_8["profile"]) == [k.replace("repetitions", "rounds") for k in version_7["profile"]]
    unchanged = ("format_version", "profile", "settings")
    assert {k: v for k, v in version_8.items() if k not in unchanged} == {
        k: v for k, v in version_7.items() if k not in unchanged
    }
    assert read_run(version_7, RUNS / "v7").settings.load_cpu == 1


def test_version_9_becomes_10_with_ticks_for_every_interference_and_each_cells_own_concurrency() -> None:
    stored = json.loads((RUNS / "v9-cherrypy-speed-power.json").read_text())  # a committed run, frozen at version 9
    version_9 = read_form(stored)
    assert version_9["format_version"] == 9
    version_10 = run_v9_to_v10(version_9)
    assert version_10["format_version"] == 10
    assert version_10["profile"]["counting"] == {**version_9["profile"]["counting"], "concurrency": None}
    reps = 0
    for subject_9, subject_10 in zip(version_9["subjects"], version_10["subjects"], strict=True):
        for cell_9, cell_10 in zip(subject_9["cells"], subject_10["cells"], strict=True):
            for rep_9, rep_10 in zip(cell_9["repetitions"], cell_10["repetitions"], strict=True):
                assert rep_10 == {**rep_9, "other_busy_clock": "ticks"} and rep_9["other_busy_s"] is not None
                reps += 1
    assert reps > 0
    unchanged = ("format_version", "profile", "subjects")
    assert {k: v for k, v in version_10.items() if k not in unchanged} == {
        k: v for k, v in version_9.items() if k not in unchanged
    }
    run = read_run(stored, RUNS / "v9")
    assert all(rep.other_busy_clock == "ticks" for s in run.subjects for c in s.cells for rep in c.repetitions)


def test_an_overhead_record_of_version_2_says_its_virtualization_was_not_recorded() -> None:
    version_2 = json.loads((RUNS / "v2-overhead.json").read_text())  # a committed record, frozen at version 2
    version_3 = overhead_v2_to_v3(version_2)
    assert version_3["format_version"] == 3
    assert version_3["environment"] == {**version_2["environment"], "virtualization": "not recorded"}
    assert {k: v for k, v in version_3.items() if k not in ("environment", "format_version")} == {
        k: v for k, v in version_2.items() if k not in ("environment", "format_version")
    }


def test_an_overhead_record_of_version_3_names_the_load_cpu_as_runs_do() -> None:
    version_3 = json.loads((RUNS / "v3-overhead.json").read_text())  # a committed record, frozen at version 3
    version_4 = overhead_v3_to_v4(version_3)
    assert version_4["settings"] == {"server_cpu": 0, "load_cpu": 1} and version_3["settings"]["tool_cpu"] == 1
    assert {k: v for k, v in version_4.items() if k not in ("settings", "format_version")} == {
        k: v for k, v in version_3.items() if k not in ("settings", "format_version")
    }
    assert read_overhead(version_3, RUNS / "v3-overhead.json").harness_rps == tuple(version_3["harness_rps"])


def version_2() -> dict:
    """A frozen version 1 run (the first committed one) upgraded to version 2."""
    return run_v1_to_v2(json.loads((RUNS / "v1-first-shape-cherrypy-speed.json").read_text()))


def test_version_3_becomes_4_with_ticks_no_precision_target_and_no_claim_standings() -> None:
    version_3 = run_v2_to_v3(version_2())
    assert version_3["format_version"] == 3 and "target_half_width" not in version_3["profile"]
    version_4 = run_v3_to_v4(version_3)
    assert version_4["format_version"] == 4 and version_4["profile"]["target_half_width"] == 0
    for subject_3, subject_4 in zip(version_3["subjects"], version_4["subjects"], strict=True):
        for cell_3, cell_4 in zip(subject_3["cells"], subject_4["cells"], strict=True):
            assert cell_4["repetitions"] == [{**rep, "server_cpu_clock": "ticks"} for rep in cell_3["repetitions"]]
    assert version_4["rounds"] is None or version_4["rounds"]["claims"] == {}
    unchanged = ("format_version", "subjects", "profile", "rounds")
    assert {k: v for k, v in version_4.items() if k not in unchanged} == {
        k: v for k, v in version_3.items() if k not in unchanged
    }


def test_version_2_becomes_3_without_a_hosts_ssh_login_or_address() -> None:
    document = version_2()
    host = {"environment": document["environment"], "ssh": "bench@10.1.2.3", "address": "10.1.2.3"}
    document["topology"] = {"server": {**host, "role": "server"}, "load": {**host, "role": "load"}}
    document["skipped"] = [
        {"name": "x", "label": "X", "reason": "missing", "detail": "no module x (on the server host bench@10.1.2.3)"}
    ]
    version_3 = run_v2_to_v3(document)
    said = json.dumps(version_3)
    assert "bench@" not in said and "10.1.2.3" not in said and '"ssh"' not in said
    assert version_3["skipped"][0]["detail"] == "no module x (on the server host)"
    assert set(version_3["topology"]["server"]) == {"role", "environment", "machine"}


SWEEP = COMMITTED_DATA / "cherrypy-speed" / "20261126T192326.671441Z-sweep"  # pinned: the largest run


def test_a_stored_run_holds_its_repetitions_as_columns_and_reads_back_as_rows() -> None:
    text = (SWEEP / RUN_FILE).read_text()
    assert text.count("\n") == 1  # no indentation
    stored = json.loads(text)
    cell = stored["subjects"][0]["cells"][0]
    columns = cell["repetitions"]["columns"]
    run = load_run(SWEEP)
    first = run.subjects[0].cells[0]
    assert [rep.raw_output for rep in first.repetitions] == columns["raw_output"]
    assert [rep.result.requests_per_s for rep in first.repetitions] == columns["result"]["columns"]["requests_per_s"]
    assert stored_form(run.to_json()) == stored  # written back, the same file


@pytest.mark.parametrize(
    "rows",
    [
        [{"a": 1, "b": {"c": 2}}, {"a": 3, "b": {"c": 4}}],  # nested rows become nested columns
        [{"a": 1, "b": None}, {"a": 3, "b": {"c": 4}}],  # a field that is not a row in every one: a list
        [{"a": 1}, {"b": 2}],  # differing fields: rows
        [{}, {}],  # rows of no field: rows (a column list could not say how many)
        [],
    ],
)
def test_columns_give_back_exactly_the_rows_they_were_made_of(rows: list) -> None:
    assert as_rows(json.loads(json.dumps(as_columns(rows)))) == rows


def test_a_row_shaped_run_still_reads() -> None:
    stored = read_json(SWEEP / RUN_FILE)
    rows = read_form(stored)
    assert isinstance(rows["subjects"][0]["cells"][0]["repetitions"], list)
    assert read_run(rows, SWEEP / RUN_FILE) == read_run(stored, SWEEP / RUN_FILE)
    assert isinstance(stored["subjects"][0]["cells"][0]["repetitions"], dict)  # reading left the document as it was


def test_no_committed_data_file_is_over_one_mebibyte() -> None:
    sizes = {path: path.stat().st_size for path in COMMITTED_DATA.rglob("*") if path.is_file()}
    assert sizes and max(sizes.values()) <= 2**20, max(sizes, key=sizes.__getitem__)


def test_version_10_becomes_11_recording_an_ab_runs_sides_from_its_copies_labels() -> None:
    stored = json.loads((RUNS / "v9-cherrypy-speed-power.json").read_text())  # an A/B run, frozen at version 9
    version_11 = run_v10_to_v11(run_v9_to_v10(read_form(stored)))
    assert version_11["format_version"] == 11 and version_11["profile"]["sweep"] is None
    run = read_run(stored, RUNS / "v9")
    assert run.variants is not None and not run.variants.sweep
    a, b = run.variants.variants
    labels = {subject.name: subject.label for subject in run.subjects}
    assert (a.name, a.kind, a.spec) == ("a", "checkout", "checkout")
    assert b.name == "b" and b.kind == "dir" and f"[B: {b.spec}]" in labels[b.copies["framework"]]
    assert a.copies == {"framework": "framework-a"} and b.copies == {"framework": "framework-b"}


def test_every_committed_sweep_run_records_each_release_and_the_copies_that_ran_it() -> None:
    sweeps = list_runs(COMMITTED_DATA / "cherrypy-speed", "sweep")  # CherryPy's releases (not cheroot's)
    assert len(sweeps) >= 1
    for run_dir in sweeps:
        run = load_run(run_dir)
        assert run.variants is not None and run.variants.package == "CherryPy" == run.profile.sweep
        assert [v.spec for v in run.variants.variants] == [f"release:CherryPy=={r}" for r in run.profile.releases]
        for variant in run.variants.variants:
            assert set(variant.copies) == {"framework", "raw-wsgi"}
            for copy in variant.copies.values():
                subject = run.subject(copy)
                assert subject is not None and variant.spec.split("==")[1] in subject.label


# pinned: the committed sweeps the cherrypy-speed page shows (CherryPy's releases, cheroot's)
COUNTED_SWEEPS = ("20261126T192326.671441Z-sweep", "20261126T175644.478812Z-cheroot-sweep")


@pytest.mark.parametrize("run_id", COUNTED_SWEEPS)
def test_every_counted_batch_of_a_committed_sweep_lies_within_1_percent_of_its_median(run_id: str) -> None:
    run = load_run(COMMITTED_DATA / "cherrypy-speed" / run_id)
    assert run.counting is not None and run.variants is not None
    counts = run.counting.counts
    assert len(counts) == sum(len(variant.copies) for variant in run.variants.variants)  # every copy counted
    spreads = {f"{count.subject} {count.cell}": count.spread for count in counts}
    assert all(count.error is None and len(count.batches) >= 3 for count in counts)
    assert {name: spread for name, spread in spreads.items() if spread is None or spread > 0.01} == {}


def test_a_profile_lists_its_own_runs_not_those_of_a_profile_whose_name_ends_like_it(tmp_path: Path) -> None:
    recipe = tmp_path / "cherrypy-speed"
    for run_id in ("20261126T161355.552195Z-cheroot-sweep", "20261126T165133.073677Z-sweep", "20261122T005146Z-quick",
                   "20261122T005147Z-sweep-quick"):  # fmt: skip
        (recipe / run_id).mkdir(parents=True)
        (recipe / run_id / RUN_FILE).write_text("{}")
    assert [p.name for p in list_runs(recipe, "sweep")] == ["20261126T165133.073677Z-sweep"]
    assert [p.name for p in list_runs(recipe, "quick")] == ["20261122T005146Z-quick"]
    assert [p.name for p in list_runs(recipe, "cheroot-sweep")] == ["20261126T161355.552195Z-cheroot-sweep"]


def test_version_12_becomes_13_naming_the_reference_of_its_variants() -> None:
    sides = [{"name": "a"}, {"name": "b"}]
    releases = [{"name": "6_0_0"}, {"name": "11_1_2"}]
    ab = run_v12_to_v13({"format_version": 12, "variants": {"purpose": "versus", "package": None, "variants": sides}})
    sweep = run_v12_to_v13(
        {"format_version": 12, "variants": {"purpose": "sweep", "package": "cheroot", "variants": releases}}
    )
    assert ab["variants"] == {"reference": "a", "package": None, "variants": sides} and ab["format_version"] == 13
    assert sweep["variants"]["reference"] == "11_1_2" and "purpose" not in sweep["variants"]
    assert run_v12_to_v13({"format_version": 12, "variants": None})["variants"] is None


def test_version_13_becomes_14_with_no_memory_and_no_latency_recorded() -> None:
    rep = {"index": 1, "disturbed": False}
    old = {
        "format_version": 13,
        "profile": {"name": "full"},
        "subjects": [{"name": "s", "cells": [{"name": "c1", "repetitions": [rep]}]}],
    }
    new = run_v13_to_v14(old)
    assert new["format_version"] == 14 and new["latency"] is None and new["profile"]["latency"] is None
    [subject] = new["subjects"]
    assert subject["idle_memory"] is None
    assert subject["cells"][0]["repetitions"] == [{**rep, "server_memory": None}]
    assert old["subjects"][0]["cells"][0]["repetitions"] == [rep]  # the old document is left as it was


def test_version_14_becomes_15_with_no_time_bound_and_no_sequential_looks() -> None:
    old = {"format_version": 14, "profile": {"name": "full", "rounds": 5}}
    new = run_v14_to_v15(old)
    assert new["format_version"] == 15
    assert new["profile"] == {"name": "full", "rounds": 5, "seconds": 0, "sequential": False, "smallest_change": 0}
    assert old["profile"] == {"name": "full", "rounds": 5}  # the old document is left as it was


def test_version_15_becomes_16_with_no_memory_readings_kept() -> None:
    rep = {"index": 1, "server_memory": None}
    latency = {"subjects": [{"subject": "s", "loads": [{"fraction": 0.25, "cell": {"repetitions": [rep]}}]}]}
    old = {
        "format_version": 15,
        "subjects": [{"name": "s", "idle_memory": None, "cells": [{"name": "c1", "repetitions": [rep]}]}],
        "latency": latency,
    }
    new = run_v15_to_v16(old)
    assert new["format_version"] == 16 and new["subjects"][0]["idle_memory_output"] is None
    assert new["subjects"][0]["cells"][0]["repetitions"] == [{**rep, "memory_output": None}]
    assert new["latency"]["subjects"][0]["loads"][0]["cell"]["repetitions"] == [{**rep, "memory_output": None}]
    assert run_v15_to_v16({**old, "latency": None})["latency"] is None
    assert old["subjects"][0]["cells"][0]["repetitions"] == [rep]  # the old document is left as it was
