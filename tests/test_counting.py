"""Instructions per request under callgrind: counted in batches after the timed rounds, deaf to a CPU hog,
and every way it can fail is one line in the run with the timed results kept."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from benchsite.errors import BenchError
from benchsite.harness.profiling.counting import _monitor, _totals, counted_cell, valgrind_version
from benchsite.model.counting import CountedBatch, CountPlan, InstructionCount
from benchsite.results.store import list_runs, load_run
from benchsite.tools.ab import AbCell
from benchsite.tools.wrk import WrkCell
from conftest import ToyRecipes, cpu_hog, processes_mentioning, run_invoke, toy_subject

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(valgrind_version() is None, reason="needs Debian's valgrind (conf/apt-packages.txt)"),
]

COUNTING = """
[profiles.quick.counting]
cells = ["c1"]
batches = 3
requests = 40
warmup_requests = 20
"""


def counted_run(toy: ToyRecipes, *server_args: str, wait: bool = True) -> InstructionCount:
    toy.add("counted", toy_subject(*server_args), conf=COUNTING)
    waiting = [] if wait else ["--no-wait"]  # under a hog, not the 30 s wait for a machine that stays busy
    result = run_invoke(
        "recipe", "counted", "--profile", "quick", *waiting, "--data-dir", str(toy.data_dir), env=toy.env
    )
    assert result.returncode == 0, result.stderr
    assert processes_mentioning(str(toy.root)) == []
    run = load_run(list_runs(toy.data_dir / "counted")[-1])
    assert run.subjects[0].cells[0].repetitions[0].ok  # the timed results are there either way
    assert run.counting is not None and run.counting.skipped is None and run.counting.counter.startswith("valgrind-")
    [count] = run.counting.counts
    log = (run.path / "logs" / f"{count.subject}-callgrind.log").read_text()
    workroots = str(Path(tempfile.gettempdir()) / "benchsite-")
    assert "Callgrind" in log and workroots not in log  # kept, with the temporary folder as {workroot}
    return count


def test_a_count_is_three_batches_whose_instructions_per_request_agree_quiet_or_under_a_hog(toy: ToyRecipes) -> None:
    quiet = counted_run(toy)
    assert [b.requests for b in quiet.batches] == [40, 40, 40] and quiet.error is None
    assert quiet.argv[0] == "ab" and "-n" in quiet.argv and "-c" in quiet.argv
    assert quiet.per_request is not None and quiet.spread is not None and quiet.spread < 0.01
    with cpu_hog(cpu=0, seconds=240):  # the server's CPU (conf: server_cpu = 0)
        hogged = counted_run(ToyRecipes(toy.root / "again"), wait=False)
    assert hogged.per_request is not None
    assert abs(hogged.per_request / quiet.per_request - 1) < 0.01


def test_a_server_that_dies_under_valgrind_is_one_line_and_its_timed_results_stay(toy: ToyRecipes) -> None:
    count = counted_run(toy, "--exit-under-valgrind")
    assert count.batches == () and count.per_request is None
    assert count.error is not None and "\n" not in count.error and "exited with code 3" in count.error


def test_missing_valgrind_and_a_dump_without_totals_are_one_line(tmp_path: Path) -> None:
    assert valgrind_version("/nonexistent/valgrind") is None
    dump = tmp_path / "callgrind.1.out.1"
    dump.write_text("events: Ir\n")
    with pytest.raises(BenchError, match="has no totals line"):
        _totals(dump)
    with pytest.raises(BenchError, match=r"^vgdb \(zero, instrumentation on\) failed for process 999999999: .*pid"):
        _monitor(tmp_path, 999_999_999, "zero", "instrumentation on")  # no callgrind process of that pid


def test_the_median_and_spread_of_batches() -> None:
    batches = tuple(CountedBatch(requests=100, instructions=n, wall_s=1.0) for n in (100_000, 101_000, 99_500))
    count = InstructionCount(subject="s", cell="c1", argv=("ab",), batches=batches, error=None)
    assert count.per_request == 1000 and count.spread == pytest.approx(0.01)


def test_a_plan_with_a_concurrency_counts_an_ab_cells_command_at_it_and_refuses_a_wrk_cell() -> None:
    plan = {"cells": ["c10"], "batches": 3, "requests": 300, "warmup_requests": 100, "starts": 1}
    cell = AbCell(concurrency=10, keepalive=False)
    assert counted_cell(cell, CountPlan(**plan, concurrency=None)) is cell
    one = counted_cell(cell, CountPlan(**plan, concurrency=1))
    assert one.argv("http://127.0.0.1:1/", 300, "ab", 10)[-3:] == ["-c", "1", "http://127.0.0.1:1/"]
    assert one.name == "c10"  # the count stays the cell's, its command says -c 1
    with pytest.raises(BenchError, match=r"counting\.concurrency is for ab cells"):
        counted_cell(WrkCell(name="wrk", label="wrk", connections=10, duration_s=3), CountPlan(**plan, concurrency=1))
