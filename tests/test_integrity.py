"""A run's raw outputs agree with themselves and with run.json, and a run is known by its content."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchsite.errors import BenchError
from benchsite.model.run import RUN_FILE, RunDocument
from benchsite.model.upgrade import read_run
from benchsite.results.clocks import READS_ROOM_S, START_AND_END_S, START_AND_END_SHARE, clock_disagreement
from benchsite.results.integrity import content_digest, identities, reparse_mismatches
from benchsite.results.store import load_run
from benchsite.tools.ab import AbParseError, parse_ab_output
from benchsite.tools.agreement import Printed, quotient_agrees
from benchsite.tools.base import Repetition
from benchsite.tools.h2load import H2loadParseError, parse_h2load_output
from benchsite.tools.paced import OUTSIDE_BEFORE_VERSION_4_S, parse_paced_output
from benchsite.tools.wrk import WrkParseError, parse_wrk_output
from committed import COMMITTED_DATA
from conftest import FIXTURES

RUN = COMMITTED_DATA / "cherrypy-speed" / "20261123T071248.420032Z-full"  # pinned by its id
AB_REPORTS = sorted((FIXTURES / "ab").glob("*.txt"))


def test_a_printed_figure_is_known_to_its_last_digit() -> None:
    assert Printed.of("2.414") == Printed(2.414, pytest.approx(0.001))
    assert Printed.of("441.89", 1024).step == pytest.approx(10.24)
    # 1000 requests in 2.414 s: 414.25 req/s, anywhere from 414.16 to 414.33 with the time's rounding
    assert quotient_agrees(Printed.of("414.19"), Printed(1000), Printed.of("2.414"))
    assert not quotient_agrees(Printed.of("828.38"), Printed(1000), Printed.of("2.414"))
    assert quotient_agrees(Printed.of("0.00"), Printed(0), Printed.of("0.000"))  # nothing to check


def test_every_committed_run_agrees_with_itself() -> None:
    runs = sorted(COMMITTED_DATA.glob(f"**/{RUN_FILE}"))
    assert len(runs) > 40
    problems = {
        str(path.parent.relative_to(COMMITTED_DATA)): reparse_mismatches(load_run(path.parent)) for path in runs
    }
    assert {run: found[:2] for run, found in problems.items() if found} == {}


@pytest.mark.parametrize("report", AB_REPORTS, ids=lambda path: path.name)
def test_every_recorded_ab_report_agrees_with_itself(report: Path) -> None:
    text = report.read_text()
    if "Requests per second" not in text or "longest request" not in text:
        pytest.skip("a cut report: its own test says what it lacks")
    parse_ab_output(text)


@pytest.mark.parametrize(
    ("line", "doctored", "said"),
    [
        (r"Requests per second:\s+[\d.]+", "Requests per second:    828.38", "Requests per second 828.38 is not"),
        (r"Time per request:\s+[\d.]+ \[ms\] \(mean\)\n", "Time per request:       1.207 [ms] (mean)\n", "Time per"),
        (r"Transfer rate:\s+[\d.]+", "Transfer rate:          101.92", "Transfer rate 101.92 is not"),
        (r"HTML transferred:\s+\d+", "HTML transferred:       4000", "HTML transferred 4000 bytes is not"),
    ],
)
def test_an_ab_report_edited_in_one_line_disagrees_with_itself(line: str, doctored: str, said: str) -> None:
    report = (FIXTURES / "ab" / "ab-2.3-r1430300-cherrypy-test1.txt").read_text()
    edited, count = re.subn(line, doctored, report, count=1)
    assert count == 1
    with pytest.raises(AbParseError, match="ab output disagrees with itself: " + re.escape(said)):
        parse_ab_output(edited)


def test_a_wrk_report_with_doubled_requests_per_second_disagrees_with_itself() -> None:
    report = (FIXTURES / "wrk" / "wrk-4.1.0-cheroot-c10.txt").read_text()
    parse_wrk_output(report)
    rate = float(re.search(r"^Requests/sec:\s+([\d.]+)", report, re.M).group(1))
    edited = re.sub(r"^Requests/sec:\s+[\d.]+", f"Requests/sec: {2 * rate:10.2f}", report, flags=re.M)
    with pytest.raises(WrkParseError, match="wrk output disagrees with itself: Requests/sec"):
        parse_wrk_output(edited)


def test_an_h2load_report_with_doubled_requests_per_second_disagrees_with_itself() -> None:
    report = (FIXTURES / "h2load" / "h2load-1.52-cheroot-c10.txt").read_text()
    parse_h2load_output(report)
    rate = re.search(r"^finished in \S+, ([\d.]+) req/s", report, re.M).group(1)
    edited = report.replace(f", {rate} req/s", f", {2 * float(rate):.2f} req/s", 1)
    with pytest.raises(H2loadParseError, match="h2load output disagrees with itself: req/s"):
        parse_h2load_output(edited)


def test_a_committed_run_with_every_raw_output_doubled_is_refused_naming_the_file(tmp_path: Path) -> None:
    """The doctored run of the faults round: every ab report's req/s doubled, run.json edited to match."""
    copy = tmp_path / RUN.name
    shutil.copytree(RUN, copy)
    document = json.loads((copy / RUN_FILE).read_text())
    for subject in document["subjects"]:
        for cell in subject["cells"]:
            columns = cell["repetitions"]["columns"]
            rates = columns["result"]["columns"]["requests_per_s"]
            for index, name in enumerate(columns["raw_output"]):
                raw = copy / name
                raw.write_text(
                    re.sub(r"(Requests per second:\s+)[\d.]+", rf"\g<1>{2 * rates[index]:.2f}", raw.read_text())
                )
                rates[index] = round(2 * rates[index], 2)
    (copy / RUN_FILE).write_text(json.dumps(document))
    problems = reparse_mismatches(load_run(copy))
    assert problems and problems[0].startswith("raw/") and "disagrees with itself" in problems[0]


def _copy_under_a_new_id(tmp_path: Path) -> Path:
    copy = tmp_path / "20261123T071249.000000Z-full"
    shutil.copytree(RUN, copy)
    document = json.loads((copy / RUN_FILE).read_text())
    document["run_id"] = copy.name
    (copy / RUN_FILE).write_text(json.dumps(document))
    return copy


@pytest.mark.parametrize(
    ("how", "reformat"),
    [
        ("three trailing blanks on its last line", lambda text: text.rstrip("\n") + "   \n"),
        ("an empty last line", lambda text: text + "\n"),
        ("CRLF line ends", lambda text: text.replace("\n", "\r\n")),
        ("no final newline", lambda text: text.rstrip("\n")),
    ],
)
def test_a_copy_with_a_report_reformatted_is_known_as_the_run_it_copies(tmp_path: Path, how: str, reformat) -> None:
    """The faults round's copy: the same figures in other bytes are the same run (and still parse to them)."""
    copy = _copy_under_a_new_id(tmp_path)
    raw = next(copy.glob("raw/*/*/rep-1.txt"))
    raw.write_bytes(reformat(raw.read_text()).encode())
    copied = load_run(copy)
    assert reparse_mismatches(copied) == [], how
    assert content_digest(copied) == content_digest(load_run(RUN)) is not None


def test_a_copy_with_one_figure_changed_is_another_run_and_a_restart_the_same(tmp_path: Path) -> None:
    copy = _copy_under_a_new_id(tmp_path)
    original = load_run(RUN)
    assert identities(load_run(copy), content_digest(load_run(copy))) == identities(original, content_digest(original))
    raw = next(copy.glob("raw/*/*/rep-1.txt"))
    raw.write_text(re.sub(r"(Connect:\s+\d+\s+\d+\s+)([\d.]+)", lambda m: m[1] + "9.9", raw.read_text(), count=1))
    edited = load_run(copy)
    assert content_digest(edited) != content_digest(original)  # its run.json now disagrees, which is refused
    started_again = identities(edited, content_digest(edited))
    assert started_again[0] == identities(original, None)[0]  # one machine, one start: still the same run


def test_columns_of_unequal_length_say_which_in_which_cell() -> None:
    document = json.loads((RUN / RUN_FILE).read_text())
    cell = document["subjects"][0]["cells"][0]
    cell["repetitions"]["columns"]["result"]["columns"]["requests_per_s"].pop()
    with pytest.raises(BenchError) as raised:
        read_run(document, RUN / RUN_FILE)
    said = str(raised.value)
    subject = document["subjects"][0]["name"]
    assert said.startswith(f"{RUN / RUN_FILE}: cell {cell['name']} of subject {subject}: column result.")
    assert "requests_per_s has" in said and "\n" not in said


def _rescaled(report: str, factor: float) -> str:
    """An ab 2.3 report as if it had taken `factor` of its time: every line ab derives from it recomputed."""
    result = parse_ab_output(report)
    taken = round(result.time_taken_s * factor, 3)
    done, concurrency = result.complete_requests, result.concurrency
    lines = {
        r"(Time taken for tests:\s+)[\d.]+": f"{taken:.3f}",
        r"(Requests per second:\s+)[\d.]+": f"{done / taken:.2f}",
        r"(Time per request:\s+)[\d.]+( \[ms\] \(mean\)$)": f"{1000 * concurrency * taken / done:.3f}",
        r"(Time per request:\s+)[\d.]+( \[ms\] \(mean, across)": f"{1000 * taken / done:.3f}",
        r"(Transfer rate:\s+)[\d.]+": f"{result.total_transferred_bytes / 1024 / taken:.2f}",
    }
    for pattern, value in lines.items():

        def put(match: re.Match[str], value: str = value) -> str:
            return match[1] + value + (match[2] if match.lastindex == 2 else "")

        report = re.sub(pattern, put, report, count=1, flags=re.M)
    return report


def test_a_run_rescaled_to_half_its_time_agrees_with_itself_but_not_with_its_clocks(tmp_path: Path) -> None:
    """The faults round's rescale: every report's time halved with its derived lines, run.json to match."""
    copy = _copy_under_a_new_id(tmp_path)
    document = json.loads((copy / RUN_FILE).read_text())
    first = None
    for subject in document["subjects"]:
        for cell in subject["cells"]:
            columns = cell["repetitions"]["columns"]
            results = columns["result"]["columns"]
            for index, name in enumerate(columns["raw_output"]):
                raw = copy / name
                doctored = _rescaled(raw.read_text(), 0.5)
                raw.write_text(doctored)
                again = parse_ab_output(doctored)  # agrees with itself
                for field in ("time_taken_s", "requests_per_s", "time_per_request_ms", "time_per_request_all_ms"):
                    results[field][index] = getattr(again, field)
                results["transfer_rate_kbytes_s"][index] = again.transfer_rate_kbytes_s
                first = first or name
    (copy / RUN_FILE).write_text(json.dumps(document))
    problems = reparse_mismatches(load_run(copy))
    assert problems and problems[0].startswith(f"{first}: ab says it measured ")
    assert "the harness timed around it" in problems[0] and "starting and ending ab takes at most" in problems[0]
    assert len(problems) > 50  # every repetition long enough that half its time exceeds what starting ab takes


def test_a_rescaled_run_whose_wall_clock_was_rescaled_too_is_refused_by_its_servers_cpu_time(tmp_path: Path) -> None:
    copy = _copy_under_a_new_id(tmp_path)
    document = json.loads((copy / RUN_FILE).read_text())
    cell = document["subjects"][0]["cells"][0]
    columns = cell["repetitions"]["columns"]
    columns["wall_s"][0] = round(columns["server_cpu_s"][0] / 2, 6)
    (copy / RUN_FILE).write_text(json.dumps(document))
    problems = reparse_mismatches(load_run(copy))
    assert problems and problems[0].startswith(columns["raw_output"][0])
    assert "longer than the" in problems[0] or "pinned to one CPU, used" in problems[0]


LATENCY_RUN = COMMITTED_DATA / "cherrypy-speed" / "20261127T123846.855229Z-full"  # pinned: its open-loop loads
# Recorded 2026-11-28 on the project's VM beside eight busy processes (`yes`) on its two CPUs: benchsite-paced 4 at
# 200 req/s for 2 s with its witness, against Python's http.server; the shell timed 3.515 s around it.
BUSY_PACED = (FIXTURES / "paced" / "http-server-busy-v4.txt").read_text()
BUSY_PACED_WALL_S = 3.515


def test_a_server_may_work_on_while_a_busy_harness_reads_its_cpu_and_no_longer() -> None:
    """The server's CPU is read just outside the tool's clock: beside tests/random_hog.py socketify used 0.0848 s of
    CPU in a 0.0763 s clock (2026-11-29), which is allowed; twice the clock is not."""
    run = load_run(LATENCY_RUN)
    rep = next(r for _, cell in run.every_cell() for r in cell.repetitions if r.result and r.result.tool == "ab")
    assert rep.result is not None and rep.server_cpu_clock == "schedstat"
    seen = rep.model_copy(update={"server_cpu_s": rep.wall_s + 0.0085})
    assert clock_disagreement(run, seen, rep.result) is None
    doubled = rep.model_copy(update={"server_cpu_s": rep.wall_s * 2 + READS_ROOM_S})
    said = clock_disagreement(run, doubled, rep.result)
    assert said is not None and "pinned to one CPU, used" in said


def _paced_repetition(wall_s: float) -> tuple[RunDocument, Repetition[Any]]:
    run = load_run(LATENCY_RUN)
    rep = next(r for _, cell in run.every_cell() for r in cell.repetitions if r.result and r.result.tool == "paced")
    return run, rep.model_copy(update={"wall_s": wall_s})


def test_an_open_loop_load_may_start_as_slowly_as_its_report_says_and_no_slower() -> None:
    """benchsite-paced 4 says how long its process ran outside its schedule (its imports and its witness's start
    took 1.43 s on the busy machine): the harness's clock may hold that much more than the schedule, no more."""
    report = parse_paced_output(BUSY_PACED)
    assert report.before_schedule_s is not None and report.before_schedule_s > OUTSIDE_BEFORE_VERSION_4_S
    assert clock_disagreement(*_paced_repetition(BUSY_PACED_WALL_S), report) is None
    explained = report.measured_s + report.outside_measurement_s + START_AND_END_S
    longest = explained / (1 - START_AND_END_SHARE)  # the harness's clock where the room runs out
    assert clock_disagreement(*_paced_repetition(longest * 0.99), report) is None
    said = clock_disagreement(*_paced_repetition(longest * 1.01), report)
    assert said is not None and "where starting and ending paced takes at most" in said
    # The same report without its line, as version 3 printed it, gets the fixed second of earlier runs: refused
    earlier = re.sub(
        r"^outside schedule: .*\n", "", BUSY_PACED.replace("benchsite-paced 4", "benchsite-paced 3"), flags=re.M
    )
    assert clock_disagreement(*_paced_repetition(BUSY_PACED_WALL_S), parse_paced_output(earlier)) is not None
