"""`invoke powerbench`: its record rewritten after every A/B run, and an interrupted benchmark going on with it as
an unbroken one would have (the same order of levels, the same hogs)."""

from __future__ import annotations

import random
import subprocess
from itertools import islice
from pathlib import Path

import pytest

from benchsite.errors import BenchError
from benchsite.harness.experiments.powerbench import (
    EXPERIMENT_DIR,
    HOG_LEVELS,
    LEVELS,
    RECIPE,
    HogChoice,
    Level,
    PowerProgress,
    calibrated_loops,
    hog_plans,
    method_record,
    power_runs,
    progress_of,
)
from benchsite.model.method import METHOD_DIR
from benchsite.model.upgrade import read_method
from committed import COMMITTED_DATA
from conftest import REPO, run_invoke

RUNS_DIR = COMMITTED_DATA / EXPERIMENT_DIR / RECIPE


def committed_progress() -> PowerProgress:
    path = COMMITTED_DATA / METHOD_DIR / "power.toml"
    return progress_of(read_method(path), RUNS_DIR, False, path.name)


def made_id(n: int) -> str:
    """The id of a run that stands for the n-th one made."""
    return f"20261127T0000{n:02d}Z-power"


def read_back(text: str, folder: Path, hog: bool = False) -> PowerProgress:
    path = folder / "power.toml"
    path.write_text(text)
    return progress_of(read_method(path), RUNS_DIR, hog, path.name)


def test_a_resumed_benchmark_makes_the_missing_runs_in_the_order_an_unbroken_one_would(tmp_path: Path) -> None:
    unchanged, work, time = LEVELS
    full = committed_progress()
    kept = {unchanged: 2, work: 1, time: 1}  # cut during the second turn, after its A/A run
    cut = PowerProgress(full.pilot, {level: full.made[level][: kept[level]] for level in LEVELS})
    calls: list[tuple[str, str]] = []
    records: list[str] = []

    def versus_run(a: Path, b: Path) -> Path:
        calls.append((a.name, b.name))
        return tmp_path / made_id(len(calls))

    def keep(progress: PowerProgress, loops: dict[Level, int]) -> None:
        records.append(method_record(progress, loops, 3, "power"))

    made = power_runs(REPO, 3, versus_run, keep, print, None, cut)

    loops = calibrated_loops(full.pilot, LEVELS)
    folder = {level: f"loop-{loops[level]:06d}" for level in LEVELS}
    assert calls == [("loop-000000", folder[level]) for level in (work, time, unchanged, work, time)]
    before = {level: full.made[level][: kept[level]] for level in LEVELS}
    assert made.made == {
        unchanged: [*before[unchanged], made_id(3)],
        work: [*before[work], made_id(1), made_id(4)],
        time: [*before[time], made_id(2), made_id(5)],
    }
    assert len(records) == 1 + len(calls)  # the record rewritten after every run
    assert "--resume" in records[0] and "--resume" not in records[-1]
    assert read_back(records[-1], tmp_path).made == made.made
    assert read_back(records[2], tmp_path).made[work] == [*before[work], made_id(1)]


def test_a_resumed_hog_benchmark_draws_the_hogs_an_unbroken_one_would_have(tmp_path: Path) -> None:
    window = (12.5, 180.0)
    unbroken = list(islice(hog_plans(HogChoice(0, random.Random(7)), window, 0), 5))
    resumed = list(islice(hog_plans(HogChoice(0, random.Random(7)), window, 3), 2))
    assert resumed == unbroken[3:]
    assert len({plan.delay_s for plan in unbroken}) == 5
    for plan in unbroken:
        assert window[0] <= plan.delay_s and plan.delay_s + plan.seconds <= sum(window) + 0.1
        assert 0.3 * window[1] - 0.1 <= plan.seconds <= 0.6 * window[1] + 0.1


def test_a_hog_benchmark_record_keeps_its_window_and_its_levels_only_for_hog_benchmarks(tmp_path: Path) -> None:
    full = committed_progress()
    window = (12.5, 180.25)
    made = {level: [made_id(n)] for n, level in enumerate(HOG_LEVELS)}
    hogged = PowerProgress(full.pilot, made, window)
    record = method_record(hogged, calibrated_loops(full.pilot, HOG_LEVELS), 10, "power")
    again = read_back(record, tmp_path, hog=True)
    assert (again.window, again.made, again.pilot) == (window, made, full.pilot)
    with pytest.raises(BenchError, match=r"'5 % time.* is no level of a quiet benchmark: resume it with --hog"):
        read_back(record, tmp_path, hog=False)
    quiet = method_record(full, calibrated_loops(full.pilot, LEVELS), 10, "power")
    with pytest.raises(BenchError, match=r"'0.5 % work.* is no level of a busy \(--hog\) benchmark: resume it without"):
        read_back(quiet, tmp_path, hog=True)
    windowless = "\n".join(line for line in record.splitlines() if not line.startswith(("[made_with]", "hog_")))
    with pytest.raises(BenchError, match=r"no \[made_with\] window of the hogs"):
        read_back(windowless, tmp_path, hog=True)


def one_error(result: subprocess.CompletedProcess) -> str:
    """The one error line of a command that failed cleanly."""
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr + result.stdout, result.stderr
    return errors[0]


@pytest.mark.integration
def test_resuming_without_a_record_or_starting_over_one_under_way_is_a_one_line_error(tmp_path: Path) -> None:
    env = {"INVOKE_BENCH_DATA_DIR": str(tmp_path)}  # the data folder, for a task without --data-dir
    said = one_error(run_invoke("powerbench", "--resume", env=env))
    assert f"there is no {tmp_path / METHOD_DIR / 'power.toml'} to go on with" in said
    assert not (tmp_path / METHOD_DIR).exists()
    full = committed_progress()
    record = tmp_path / METHOD_DIR / "power.toml"
    record.parent.mkdir()
    record.write_text(method_record(full, calibrated_loops(full.pilot, LEVELS), 20, "power"))
    kept = record.read_text()
    said = one_error(run_invoke("powerbench", "--runs", "20", env=env))
    assert "is under way: go on with it with --resume, or delete it to start anew" in said
    assert record.read_text() == kept
