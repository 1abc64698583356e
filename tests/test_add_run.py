"""invoke add-run: a run made elsewhere joins data/ whole and checked, or not at all."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tiny_site import build

from benchsite.errors import BenchError
from benchsite.model.machine import machine_of
from benchsite.model.run import RUN_FILE
from benchsite.results.contribute import add_run
from benchsite.results.machines import by_machine
from benchsite.results.published import load_published
from benchsite.results.store import list_runs, load_run, recipe_views
from benchsite.sphinxext.history import short_run_name
from committed import COMMITTED_DATA
from conftest import REPO, run_invoke

pytestmark = pytest.mark.integration

RECIPE = "cherrypy-speed"
COMMITTED = [path for path in list_runs(COMMITTED_DATA / RECIPE, "full") if load_run(path).topology is None]


def elsewhere(tmp_path: Path, name: str = "visiting") -> Path:
    """A committed run as another machine's checkout would hold it: its machine renamed and refingerprinted
    (a constructed run: the tests' own input, never stored)."""
    source = COMMITTED[0]
    run_dir = tmp_path / "other" / "data" / RECIPE / source.name
    shutil.copytree(source, run_dir)
    document = json.loads((run_dir / RUN_FILE).read_text())
    run = load_run(source)
    fingerprint = run.machine.fingerprint.model_copy(update={"cpu_model": "Visiting CPU", "cpu_count": 8})
    document["machine"] = machine_of(fingerprint, name).to_json()
    (run_dir / RUN_FILE).write_text(json.dumps(document, indent=1, sort_keys=True))
    return run_dir


def site_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(COMMITTED_DATA / RECIPE, data / RECIPE, ignore=shutil.ignore_patterns(COMMITTED[0].name, "*-quick"))
    return data


def test_a_valid_run_from_another_data_dir_is_added_and_the_reference_run_stays_shown(tmp_path: Path) -> None:
    data, run_dir = site_data(tmp_path), elsewhere(tmp_path)
    result = run_invoke("add-run", str(run_dir), "--data-dir", str(data), timeout=120)
    assert result.returncode == 0, result.stderr
    assert "added" in result.stderr and "machine visiting" in result.stderr
    added = data / RECIPE / run_dir.name
    assert (added / RUN_FILE).read_bytes() == (run_dir / RUN_FILE).read_bytes()
    reference = load_published(data / RECIPE / "published.toml").reference_machine
    groups = by_machine(recipe_views(data / RECIPE, "full"), reference)
    assert groups[0].machine.name == reference and "visiting" in [g.machine.name for g in groups]
    assert groups[0].main.run.machine.name == reference  # the page's run is still the reference's
    again = run_invoke("add-run", str(run_dir), "--data-dir", str(data), timeout=120)
    assert again.returncode == 1 and "already exists" in again.stderr


def test_a_run_whose_raw_output_was_edited_is_refused_and_nothing_is_copied(tmp_path: Path) -> None:
    data, run_dir = site_data(tmp_path), elsewhere(tmp_path)
    raw = next(run_dir.glob("raw/*/*/rep-1.txt"))
    raw.write_text(re.sub(r"Requests per second:\s+[\d.]+", "Requests per second:    99999.99", raw.read_text()))
    result = run_invoke("add-run", str(run_dir), "--data-dir", str(data), timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "disagrees with itself: Requests per second 99999.99" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (data / RECIPE / run_dir.name).exists()
    assert not [p for p in (data / RECIPE).iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("disguised", [False, True], ids=["renamed", "renamed-restamped-blank-added"])
def test_a_run_copied_under_a_new_id_is_refused_naming_the_run_it_copies(tmp_path: Path, disguised: bool) -> None:
    """The duplicates of the faults rounds: a committed run with its folder and run_id renamed, and the same
    with its start time moved and three blanks added to the last line of one raw output."""
    data = site_data(tmp_path)
    source = COMMITTED[1]
    copy = tmp_path / "other" / source.name.replace(source.name[:8], "20261201")
    shutil.copytree(source, copy)
    document = json.loads((copy / RUN_FILE).read_text())
    document["run_id"] = copy.name
    if disguised:
        document["started_at"] = document["started_at"].replace(document["started_at"][:4], "2027")
        raw = next(copy.glob("raw/*/*/rep-1.txt"))
        raw.write_text(raw.read_text().rstrip("\n") + "   \n")
    (copy / RUN_FILE).write_text(json.dumps(document))
    result = run_invoke("add-run", str(copy), "--data-dir", str(data), timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    why = "the same measured figures" if disguised else "started by the same machine at the same moment"
    assert f"{why} ({document['started_at']}) as run" in result.stderr or f"{why} as run {source.name}" in result.stderr
    assert source.name in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (data / RECIPE / copy.name).exists()


def test_a_hand_edited_machine_is_refused(tmp_path: Path) -> None:
    data, run_dir = site_data(tmp_path), elsewhere(tmp_path)
    document = json.loads((run_dir / RUN_FILE).read_text())
    document["machine"]["fingerprint"]["cpu_count"] = 64
    (run_dir / RUN_FILE).write_text(json.dumps(document))
    result = run_invoke("add-run", str(run_dir), "--data-dir", str(data), timeout=120)
    assert result.returncode == 1 and "is not its fingerprint's" in result.stderr


def test_a_known_machine_under_another_name_joins_under_the_name_data_knows(tmp_path: Path) -> None:
    data = site_data(tmp_path)
    source = COMMITTED[0]  # left out of site_data: its machine is known there as amd-epyc-2cpu
    run_dir = tmp_path / "other" / "data" / RECIPE / source.name
    shutil.copytree(source, run_dir)
    document = json.loads((run_dir / RUN_FILE).read_text())
    assert document["machine"]["name"] == "amd-epyc-2cpu"
    document["machine"]["name"] = "other-box"  # as `invoke recipe --machine other-box` on the same machine names it
    (run_dir / RUN_FILE).write_text(json.dumps(document, indent=1, sort_keys=True))
    result = run_invoke("add-run", str(run_dir), "--data-dir", str(data), timeout=120)
    assert result.returncode == 0, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "machine amd-epyc-2cpu" in line and "the run named it 'other-box'" in line
    assert "the same fingerprint" in line and "the pages show it as that" in line
    added = load_run(data / RECIPE / source.name)
    assert added.machine.name == "amd-epyc-2cpu" and added.machine.id == document["machine"]["id"]
    names = {view.run.machine.name for view in recipe_views(data / RECIPE, "full")}
    assert "other-box" not in names


def _deep_json(run_dir: Path) -> None:
    (run_dir / RUN_FILE).write_text("[" * 100_000 + "]" * 100_000)


def _extra(run_dir: Path) -> None:
    (run_dir / "logs" / "notes.txt").write_text("not part of the run")


def _hard_link(run_dir: Path) -> None:
    elsewhere = run_dir.parents[2] / "secret.txt"  # outside the data folder (a link cannot cross file systems)
    elsewhere.write_text("not the run's\n")
    os.link(elsewhere, run_dir / "logs" / "hard.log")


def _fifo(run_dir: Path) -> None:
    raw = next(run_dir.glob("raw/*/*/rep-1.txt"))
    raw.unlink()
    os.mkfifo(raw)


def _sparse(run_dir: Path) -> None:
    raw = next(run_dir.glob("raw/*/*/rep-1.txt"))
    with raw.open("r+b") as handle:
        handle.truncate(1024**3)  # 1 GB, nearly all of it a hole


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_extra, "not part of the run (its run.json names no such file)"),
        (_hard_link, "a hard link to a file elsewhere"),
        (_fifo, "not a regular file (a pipe, socket or device)"),
        (_sparse, "1,073,741,824 bytes, over the"),
        (_deep_json, "JSON nested too deep"),
    ],
    ids=["extra file", "hard link", "fifo", "sparse 1 GB", "1000-deep JSON"],
)
def test_anything_a_run_does_not_describe_is_refused_in_one_line_and_nothing_is_copied(
    tmp_path: Path, damage: Callable[[Path], None], message: str
) -> None:
    data, run_dir = site_data(tmp_path), elsewhere(tmp_path)
    damage(run_dir)
    before = sorted(p.relative_to(data) for p in data.rglob("*"))
    with pytest.raises(BenchError) as refused:  # in-process: the command's one-line rendering is tested above
        add_run(run_dir, data, REPO / "recipes", REPO / "conf")
    assert message in str(refused.value) and "\n" not in str(refused.value), refused.value
    assert sorted(p.relative_to(data) for p in data.rglob("*")) == before


# The full profile shortened (requests, rounds, counting, flame graph and latency loads), every phase kept: a run
# made by this checkout's code in minutes, with every kind of file a full run writes.
SHORTER_FULL = [
    (
        "requests = 1000\nrounds = 5\nwarmup_requests = 500\n# Then",
        "requests = 200\nrounds = 2\nwarmup_requests = 50\n# Then",
    ),
    ("max_rounds = 40\ntime_budget_s = 420\n", "max_rounds = 0\ntime_budget_s = 420\n"),
    ("batches = 3\nrequests = 400\nwarmup_requests = 200", "batches = 3\nrequests = 20\nwarmup_requests = 10"),
    ('cells = ["c1"]\nseconds = 4', 'cells = ["c1"]\nseconds = 1'),
    (
        "fractions = [0.25, 0.5, 0.75, 0.9]\nseconds = 3\nrounds = 3",
        "fractions = [0.25, 0.5, 0.9]\nseconds = 1\nrounds = 1",
    ),
]


def shorter_conf(tmp_path: Path) -> Path:
    conf = tmp_path / "conf"
    shutil.copytree(REPO / "conf", conf)
    text = (conf / f"{RECIPE}.toml").read_text()
    for old, new in SHORTER_FULL:
        assert old in text, old
        text = text.replace(old, new, 1)
    (conf / f"{RECIPE}.toml").write_text(text)
    return conf


def test_a_full_run_this_checkout_makes_is_added_whole_and_shown_on_the_page(tmp_path: Path) -> None:
    """The contributor's path, end to end: a full run made now (every phase: timed rounds, counting, flame graph,
    latency loads, memory) is added by `invoke add-run` to a copy of the data, every file it wrote with it, and
    the page's history lists it, however busy the machine was."""
    env = {"INVOKE_BENCH_CONF_DIR": str(shorter_conf(tmp_path))}
    made = run_invoke("recipe", RECIPE, "--data-dir", str(tmp_path / "mine"), "--machine", "my-laptop", env=env)
    assert made.returncode == 0, made.stderr[-2000:]
    [run_dir] = list_runs(tmp_path / "mine" / RECIPE, "full")
    written = sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file())
    measured = load_run(run_dir).latency
    if measured is not None and measured.subjects:  # a busy machine may leave no capacity to offer shares of
        assert any("/paced-" in name for name in written), written  # the latency loads' raw outputs among them
    data = site_data(tmp_path)
    added = run_invoke("add-run", str(run_dir), "--data-dir", str(data), env=env, timeout=120)
    assert added.returncode == 0, added.stderr
    target = data / RECIPE / run_dir.name
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == written
    run = load_run(target)
    assert run.latency is not None  # every subject measured or left out with its reason
    assert sorted([each.subject for each in run.latency.subjects] + list(run.latency.skipped)) == [
        "framework",
        "raw-wsgi",
    ]
    readings = [rep.memory_output for _, cell in run.every_cell() for rep in cell.repetitions if rep.memory_output]
    assert readings and all(subject.idle_memory_output for subject in run.subjects)  # every reading kept, named
    page = build(tmp_path / "site", f".. bench-history:: {RECIPE}\n", data_dir=data)
    assert not page.warnings, page.warnings
    assert short_run_name(run.run_id) in page.text
    # memory is checked against its readings as figures are against the raw outputs: an edited reading is refused
    edited = tmp_path / "edited" / RECIPE / run_dir.name
    shutil.copytree(run_dir, edited)
    first = edited / readings[0]
    header, reading, *rest = first.read_text().splitlines()
    uss, pss, processes = reading.split()
    first.write_text("\n".join([header, f"{uss} {int(pss) * 2} {processes}", *rest]) + "\n")
    refused = run_invoke("add-run", str(edited), "--data-dir", str(tmp_path / "elsewhere"), env=env, timeout=120)
    assert refused.returncode == 1 and f"{readings[0]}: its readings peak at other figures" in refused.stderr


def test_a_quick_run_is_refused_as_the_smoke_test_git_ignores(tmp_path: Path) -> None:
    data, source = site_data(tmp_path), elsewhere(tmp_path)
    run_dir = source.with_name(source.name.replace("-full", "-quick"))
    source.rename(run_dir)
    document = json.loads((run_dir / RUN_FILE).read_text())
    document["run_id"] = run_dir.name
    (run_dir / RUN_FILE).write_text(json.dumps(document))
    result = run_invoke("add-run", str(run_dir), "--data-dir", str(data), timeout=120)
    assert result.returncode == 1 and not (data / RECIPE / run_dir.name).exists()
    assert "a quick run is a smoke test that git ignores" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
