"""A sequential A/B run through the real command against real servers (tests/servers/held_app.py): a side that
answers slowly is cut short by the time bound, and the run stops once every cell is decided."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchsite.model.run import RunDocument
from benchsite.results.deciding import first_rounds, looked
from benchsite.results.store import list_runs, load_run
from benchsite.results.view import RunView
from benchsite.tools.ab import AbResult
from conftest import ToyRecipes, run_invoke

pytestmark = pytest.mark.integration

HELD_APP = Path(__file__).resolve().parent / "servers" / "held_app.py"
SUBJECT = """
[[subjects]]
name = "held"
label = "held"
argv = ["{python}", "{recipe_dir}/held_app.py", "{port}", "--delay=0"]
expect = { status = 200, body = "hello" }
"""
CONF = """
[profiles.seq]
requests = 100000
seconds = 1
rounds = 2
starts = 2
sequential = true
smallest_change = 0.05
max_rounds = 30
time_budget_s = 120
warmup_requests = 20
"""


def versus_run(toy: ToyRecipes, a: str, b: str) -> RunDocument:
    directory = toy.add("seq", SUBJECT, conf=CONF)
    shutil.copy(HELD_APP, directory / "held_app.py")
    data = toy.data_dir / "versus"
    done = run_invoke(
        "versus", "seq", "-a", a, "-b", b, "--profile", "seq", "--data-dir", str(data), env=toy.env, timeout=600
    )
    assert done.returncode == 0, done.stderr
    [path] = list_runs(data / "seq")
    return load_run(path)


def test_a_slow_side_is_cut_short_and_the_run_stops_once_decided(toy: ToyRecipes) -> None:
    """B sleeps 20 ms a request (at most 50 req/s), A not at all: every repetition ends at the 1 s bound long
    before its 100,000 requests, and records how many it made; the run stops measuring as soon as its rule
    decides the cell (B slower), well before its 30 rounds, and says why."""
    run = versus_run(toy, "opt:--delay=0", "opt:--delay=0.02")
    assert run.profile.sequential and run.rounds is not None
    side_b = run.subject("held-b")
    assert side_b is not None
    [cell] = side_b.cells
    for rep in cell.repetitions:
        assert rep.argv.index("-t") < rep.argv.index("-n")  # -n after -t: the request count stays the ceiling
        result = rep.result
        assert isinstance(result, AbResult)
        assert 0 < result.complete_requests <= 50 < 100_000
        assert result.time_taken_s >= 1.0  # ab ran to its bound
    assert run.rounds.made < 30 and run.rounds.stopped.startswith("every comparison decided")
    [compared] = looked(RunView(run)).cells
    assert compared.time_changed and compared.time is not None and compared.time.value < 0.2
    disturbed = any(rep.disturbed for subject in run.subjects for c in subject.cells for rep in c.repetitions)
    if not disturbed:  # busy: a disturbed round is measured again, which may come after the cell is decided
        earlier = looked(RunView(first_rounds(run, run.rounds.made - 1))).cells
        assert not earlier[0].time_decided  # it stopped at the first round that decided it
