"""invoke compare: two runs cell by cell, the change with its interval and significance."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from benchsite.model.method import METHOD_DIR
from benchsite.model.run import RunDocument
from benchsite.model.upgrade import read_method
from benchsite.results.change_words import change_said
from benchsite.results.compare import MIN_RUNS_FOR_DRIFT, Drift, compare_runs, compare_work, run_drift
from benchsite.results.store import list_runs, load_run, load_view
from benchsite.results.view import RunView
from committed import COMMITTED_DATA
from conftest import run_invoke

RUN = COMMITTED_DATA / "cherrypy-speed" / "20261123T071248.420032Z-full"  # pinned: a stored run by its id


def scaled(run: RunDocument, factor: float) -> RunDocument:
    """The run with every req/s multiplied by factor (a fixed test input, never stored)."""
    subjects = []
    for subject in run.subjects:
        cells = []
        for cell in subject.cells:
            reps = tuple(
                rep.model_copy(
                    update={
                        "result": rep.result.model_copy(update={"requests_per_s": rep.result.requests_per_s * factor})
                    }
                )
                if rep.result
                else rep
                for rep in cell.repetitions
            )
            cells.append(cell.model_copy(update={"repetitions": reps}))
        subjects.append(subject.model_copy(update={"cells": tuple(cells)}))
    return run.model_copy(update={"subjects": tuple(subjects)})


def test_a_run_against_itself_changes_nothing() -> None:
    run = load_run(RUN)
    changes = compare_runs(RunView(run), RunView(run))
    assert len(changes) == sum(len(s.cells) for s in run.subjects)
    for change in changes:
        assert change.change is not None and abs(change.change.value - 1) < 1e-9
        said = change_said(change.change, change.changed, margin=0.0, note=change.note)
        assert not change.changed and "no change seen" in said


def test_a_run_half_again_as_fast_changed_by_50_percent() -> None:
    run = load_run(RUN)
    for change in compare_runs(RunView(run), RunView(scaled(run, 1.5))):
        assert change.change is not None and abs(change.change.value - 1.5) < 1e-9
        said = change_said(change.change, change.changed, margin=0.0, note=change.note)
        assert change.changed and said.startswith("1.50× faster (99.4 %: ")  # simultaneous over 8 cells


def test_a_drift_as_large_as_the_change_leaves_it_undecided_and_none_calls_it_changed() -> None:
    run = load_run(RUN)
    cells = {(s.name, c.name): 0.3 for s in run.subjects for c in s.cells}  # runs of one code 30 % apart (log sd)
    drifting = compare_runs(RunView(run), RunView(scaled(run, 1.5)), Drift(cells, 3))
    steady = compare_runs(RunView(run), RunView(scaled(run, 1.5)), Drift({key: 0.0 for key in cells}, 3))
    assert not any(change.changed for change in drifting) and all(change.changed for change in steady)
    for wide, narrow in zip(drifting, steady, strict=True):
        assert wide.change and narrow.change and wide.change.value == pytest.approx(narrow.change.value)
        assert wide.change.low < narrow.change.low and wide.change.high > narrow.change.high


def test_a_machines_drift_comes_from_three_or_more_of_its_runs() -> None:
    record = read_method(COMMITTED_DATA / METHOD_DIR / "interference.toml")
    [quiet_set] = [run_set for run_set in record.sets if run_set.label == "quiet"]  # the hog experiment's quiet runs
    quiet = [RunView(load_run(path)) for path in quiet_set.run_dirs(COMMITTED_DATA)]
    drift = run_drift(quiet)
    assert drift.runs == 6 and len(drift.by_cell) == 8 and all(0 <= sd < 0.05 for sd in drift.by_cell.values())
    assert run_drift(quiet[: MIN_RUNS_FOR_DRIFT - 1]).by_cell == {} and run_drift([]).median is None


@pytest.mark.integration
def test_the_compare_task_prints_every_cell_and_refuses_an_unknown_run() -> None:
    name = f"cherrypy-speed/{RUN.name}"
    result = run_invoke("compare", name, name, env={"COLUMNS": "200"}, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "How fast is CherryPy?" in result.stdout and result.stdout.count("no change seen") == 8
    assert "drift" in result.stderr.splitlines()[0]  # what the intervals count, before the table
    missing = run_invoke("compare", name, "cherrypy-speed/nope", timeout=120)
    assert missing.returncode == 1 and missing.stderr.strip() == (
        "error: no run 'cherrypy-speed/nope': give a run directory or RECIPE/RUN-ID (see `.venv/bin/invoke recipes`)"
    )


def test_the_change_is_the_ratio_of_the_figures_printed_beside_it() -> None:
    run = load_run(RUN)
    for change in compare_runs(RunView(run), RunView(scaled(run, 1.5))):
        assert change.change is not None and change.mean_a and change.mean_b
        assert change.change.value == pytest.approx(change.mean_b / change.mean_a)
        assert change.change.level == pytest.approx(1 - 0.05 / 8)  # simultaneous over the 8 cells


@pytest.mark.integration
def test_runs_of_two_machines_are_compared_with_a_warning_first() -> None:
    runs = [path for path in list_runs(COMMITTED_DATA / "cherrypy-speed", "full") if load_run(path).topology is None]
    machines: dict[str, Path] = {}
    for path in runs:  # each machine's oldest run (a quiet one)
        machines.setdefault(load_run(path).machine.name, path)
    assert {"amd-epyc-2cpu", "intel-xeon-processor-2cpu"} <= set(machines)
    a, b = (str(machines[name]) for name in ("amd-epyc-2cpu", "intel-xeon-processor-2cpu"))
    result = run_invoke("compare", a, b, env={"COLUMNS": "200"}, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0].startswith("warning: these runs come from different machines")


@pytest.mark.integration
def test_two_runs_with_no_cell_in_common_are_one_line(tmp_path: Path) -> None:
    other = tmp_path / RUN.name
    shutil.copytree(RUN, other)
    document = json.loads((other / "run.json").read_text())
    for subject in document["subjects"]:
        subject["name"] = "renamed-" + subject["name"]  # a constructed run: the test's own input
    (other / "run.json").write_text(json.dumps(document))
    result = run_invoke("compare", str(RUN), str(other), timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: {RUN.name} and {RUN.name} share no subject measured in the same cell: compare two runs that ran "
        "the same subjects and cells"
    ]


COUNTED = ("20261123T234904.925606Z-full", "20261124T000624.772536Z-full")  # pinned: two full runs with counts


@pytest.mark.integration
def test_compare_says_what_its_one_drift_figure_hides_and_sets_the_counted_work_side_by_side() -> None:
    a, b = (COMMITTED_DATA / "cherrypy-speed" / run for run in COUNTED)
    result = run_invoke("compare", str(a), str(b), env={"COLUMNS": "250"}, timeout=120)
    assert result.returncode == 0, result.stderr
    drift = [line for line in result.stderr.splitlines() if "drift" in line]
    assert len(drift) == 2  # the one figure, what it is and what it hides; then what can see below it
    said = re.search(r"run-to-run drift ±([\d.]+) %: how much two runs of the same code differ in a cell", drift[0])
    assert said and float(said.group(1)) > 0 and re.search(r"cannot show a change under ±\d+ %$", drift[0])
    assert len(re.findall(r"\d+ %", drift[0])) == 2  # the drift, and the change it hides: no third figure
    assert drift[1].endswith(".venv/bin/invoke versus cherrypy-speed -a rev:29541b3d0c8f -b rev:b9929af9d950")
    work = compare_work(load_view(a), load_view(b))
    assert [(c.subject, c.cell) for c in work] == [("framework", "c1"), ("raw-wsgi", "c1")]
    assert "Work: instructions per request" in result.stdout
    for change in work:
        assert change.change is not None and change.change.count == 3  # three batches, paired by position
        assert f"{change.per_request_a:,.0f}" in result.stdout and f"{change.per_request_b:,.0f}" in result.stdout


@pytest.mark.integration
def test_compare_says_plainly_where_work_sees_a_change_that_time_cannot() -> None:
    """Two A/B runs of the power benchmark (pinned): the A/A one, and one whose B side ran 2 % more instructions."""
    power = COMMITTED_DATA / "experiments" / "power" / "cherrypy-speed"
    a, b = power / "20261125T062106.878679Z-power", power / "20261125T062151.109863Z-power"
    result = run_invoke("compare", str(a), str(b), env={"COLUMNS": "250"}, timeout=120)
    assert result.returncode == 0, result.stderr
    work = {change.subject: change for change in compare_work(load_view(a), load_view(b))}
    assert not work["framework-a"].changed and work["framework-b"].changed
    change = work["framework-b"].change
    assert change is not None
    said = [line for line in result.stderr.splitlines() if "time cannot tell" in line]
    assert said == [
        f"framework-b c1: time cannot tell across these runs, but work changed by {100 * (change.value - 1):+.1f} % "
        "(instructions do not move with the machine's load)"
    ]


def _copy_of_the_run(tmp_path: Path) -> Path:
    copy = tmp_path / "data" / "cherrypy-speed" / RUN.name
    shutil.copytree(RUN, copy)
    return copy


def _doubled_in_run_json(copy: Path) -> str:
    document = json.loads((copy / "run.json").read_text())
    cell = document["subjects"][0]["cells"][0]["repetitions"]["columns"]
    rates = cell["result"]["columns"]["requests_per_s"]
    cell["result"]["columns"]["requests_per_s"] = [2 * rate for rate in rates]
    (copy / "run.json").write_text(json.dumps(document))
    return f"{cell['raw_output'][0]}: parses to other figures than run.json holds"


def _deleted_raw_output(copy: Path) -> str:
    raw = next(copy.glob("raw/*/*/rep-2.txt"))
    raw.unlink()
    return f"{raw}: raw output named in run.json is missing"


@pytest.mark.parametrize("damage", [_doubled_in_run_json, _deleted_raw_output], ids=["doubled", "deleted"])
def test_compare_refuses_a_run_whose_raw_outputs_do_not_back_its_figures(tmp_path: Path, damage) -> None:
    copy = _copy_of_the_run(tmp_path)
    said = damage(copy)
    for order in ([str(RUN), str(copy)], [str(copy), str(RUN)]):
        result = run_invoke("compare", *order, timeout=120)
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert "B ÷ A" not in result.stdout and not result.stdout.strip()
