"""A run's time budget fits what it measures: what follows the timed rounds is reserved from the pace they saw, and
checked against what it took in every committed run; a round's cost comes from the rounds made."""

from __future__ import annotations

import re
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from benchsite.errors import BenchError
from benchsite.harness.engine.runner import RunChoices
from benchsite.harness.session.budget import (
    CALLGRIND_MEDIAN,
    CALLGRIND_SLOWDOWN,
    COUNTING_START_S,
    FEWEST_BATCHES,
    RESERVE_SHARE,
    CountPace,
    Deadline,
    RoundClock,
    after_rounds_s,
    budget_said,
    counting_s,
    ended_said,
    fitted_counting,
    fitted_said,
    promise_said,
    reserve_s,
    smallest_counting,
)
from benchsite.model.recipe import load_recipe
from benchsite.model.run import RunDocument
from benchsite.results.store import list_runs, load_run
from committed import COMMITTED_DATA
from conftest import INVOKE, REPO, ToyRecipes, run_invoke, toy_subject

VERSUS_RUN = COMMITTED_DATA / "experiments" / "versus" / "cherrypy-speed" / "20261127T150521.998138Z-versus"


def measured_of(run: RunDocument) -> dict:
    return {(s.name, c.name): list(c.repetitions) for s in run.subjects for c in s.cells}


def committed_runs_that_counted() -> list[RunDocument]:
    runs = [load_run(path.parent) for path in sorted(COMMITTED_DATA.rglob("run.json"))]
    return [run for run in runs if run.counting and run.rounds and run.topology is None]


def test_what_follows_the_rounds_is_reserved_at_no_less_than_it_took_in_nearly_every_committed_run() -> None:
    """Replayed on every committed run that counted (their recipes as the checkout has them): the reserve is at
    least what latency, flame graphs and counting took after the timed rounds in 99 % of them, and never more
    than three times it (the reserve it replaced: up to 7.4 times)."""
    ratios = []
    for run in committed_runs_that_counted():
        recipe = load_recipe(run.recipe, REPO / "recipes", REPO / "conf")
        servers = [s.name for s in run.subjects if s.role != "client"]
        reserved = after_rounds_s(recipe, run.profile, servers, measured_of(run))
        took = (datetime.fromisoformat(run.finished_at) - datetime.fromisoformat(run.started_at)).total_seconds()
        assert run.rounds is not None
        ratios.append(reserved / (took - run.rounds.elapsed_s))
    assert len(ratios) >= 100
    assert sum(ratio < 1 for ratio in ratios) <= 0.01 * len(ratios) and max(ratios) < 3, sorted(ratios)


def test_counting_is_reserved_from_the_pace_of_each_counted_server() -> None:
    """The slower a server ran in the timed rounds, the longer it counts; one not yet timed in a counted cell
    counts at the plan's conservative pace."""
    run = load_run(VERSUS_RUN)
    plan = run.profile.counting
    assert plan is not None
    measured = measured_of(run)
    [one, other] = [s.name for s in run.subjects]
    halved = {
        **measured,
        (one, "c1"): [
            rep.model_copy(
                update={"result": rep.result.model_copy(update={"requests_per_s": rep.result.requests_per_s / 2})}
            )
            for rep in measured[(one, "c1")]
            if rep.result is not None
        ],
    }
    both = counting_s(plan, [one, other], measured)
    assert counting_s(plan, [one], measured) + counting_s(plan, [other], measured) == pytest.approx(both)
    assert counting_s(plan, [one], halved) > counting_s(plan, [one], measured)
    unknown = counting_s(plan, ["not-timed"], measured)
    assert unknown > counting_s(plan, [other], measured)  # 30 req/s under callgrind: slower than any seen here


def test_a_round_costs_its_repetitions_and_what_rounds_cost_beyond_them() -> None:
    run = load_run(VERSUS_RUN)
    measured = measured_of(run)
    walls = {
        index: sum(rep.wall_s for reps in measured.values() for rep in reps if rep.index == index)
        for index in (1, 2, 3)
    }
    clock = RoundClock(
        {index: wall + extra for (index, wall), extra in zip(walls.items(), (4.0, 5.0, 9.0), strict=True)}
    )
    assert clock.overhead_s(measured) == pytest.approx(5.0)  # the median over the rounds made
    one = next(iter(measured))
    assert clock.estimate_s([one], measured) > 5.0 and RoundClock().overhead_s(measured) == 0.0


def test_the_budget_line_says_how_many_more_rounds_fit_and_how_to_give_more() -> None:
    said = budget_said(250, 20, 86, 9)
    assert "about 86 s kept for what follows the rounds" in said and "room for about 16 more rounds" in said
    assert "--budget SECONDS" in said and "room for about 0 more rounds" in budget_said(100, 20, 86, 9)


@pytest.mark.parametrize("seconds", [-5, 5, 100_000])
def test_a_budget_out_of_range_is_refused_in_one_line(seconds: int) -> None:
    with pytest.raises(BenchError, match=r"^--budget .*: give the run's time budget in seconds, from 10 to 86400"):
        RunChoices(budget_s=seconds)


def test_the_budget_chosen_replaces_the_profiles_and_is_recorded_with_it() -> None:
    profile = load_run(VERSUS_RUN).profile
    assert RunChoices(budget_s=600).profile(profile).time_budget_s == 600
    assert RunChoices().profile(profile) is profile


def test_versus_refuses_a_budget_out_of_range_before_anything_runs(tmp_path: Path) -> None:
    argv = [*INVOKE, "versus", "cherrypy-speed", "-b", "dir:.", "--budget", "3", "--data-dir", str(tmp_path)]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error: --budget 3: give the run's time budget in seconds")
    assert not list(tmp_path.iterdir())


def test_the_rounds_keep_for_what_follows_them_at_most_a_share_of_the_budget() -> None:
    """An A/B run's counting reserved at a busy machine's pace (449 s) once took more than its whole budget (250 s):
    the rounds keep at most RESERVE_SHARE of it, and counting fits what is left."""
    assert reserve_s(449, 250) == pytest.approx(RESERVE_SHARE * 250)
    assert reserve_s(60, 250) == 60


def test_counting_fits_the_time_left_with_fewer_starts_then_fewer_batches_and_says_how_much_wider() -> None:
    run = load_run(VERSUS_RUN)
    plan = run.profile.counting
    assert plan is not None and plan.starts == 3 and plan.batches == 3
    measured = measured_of(run)
    servers = [s.name for s in run.subjects]
    seen = CountPace()
    whole = counting_s(plan, servers, measured, seen)
    assert fitted_counting(plan, servers, measured, seconds=whole + 1, seen=seen) == plan
    one_start = fitted_counting(plan, servers, measured, seconds=whole / 2, seen=seen)
    assert one_start is not None and one_start.starts == 1 and one_start.batches == 3
    assert counting_s(one_start, servers, measured, seen) <= whole / 2
    smallest = counting_s(smallest_counting(plan), servers, measured, seen)
    fewest = fitted_counting(plan, servers, measured, seconds=smallest + 0.1, seen=seen)
    assert fewest is not None and (fewest.starts, fewest.batches) == (1, FEWEST_BATCHES)
    assert fitted_counting(plan, servers, measured, seconds=smallest - 0.1, seen=seen) is None
    said = fitted_said(plan, one_start, 100)
    assert said.startswith("counting 1 start of 3, 3 batches each of 3, to fit the 100 s left")
    assert "3 batches of 9, so work's interval about 1.7× as wide" in said
    assert fitted_said(plan, None, 12).startswith("counting skipped: not even one start of 2 batches fits the 12 s")


def test_counting_goes_at_the_pace_this_run_saw_once_it_counted_a_server() -> None:
    """Before any count the constants (the committed counts' median: counting fits its batches as it goes; the
    rounds reserve it at the 99th percentile); after, the slowest the run saw."""
    seen = CountPace()
    assert (seen.slowdown, seen.start_s) == (CALLGRIND_MEDIAN, COUNTING_START_S) < (CALLGRIND_SLOWDOWN, 7)
    seen.saw(timed_rps=2000.0, requests=350, serving_s=7.0, start_s=3.0)  # 50 req/s under callgrind: 40× slower
    assert seen.slowdown == pytest.approx(40.0) and seen.start_s == 3.0
    seen.saw(timed_rps=1000.0, requests=350, serving_s=3.5, start_s=2.0)  # 10× slower: the slowest is kept
    assert seen.slowdown == pytest.approx(40.0) and seen.start_s == 3.0
    seen.saw(timed_rps=None, requests=350, serving_s=3.5, start_s=9.0)  # not timed: nothing learnt
    assert seen.start_s == 3.0


def test_a_run_with_a_budget_says_when_it_ends_before_it_starts_and_how_it_kept_it() -> None:
    run = load_run(VERSUS_RUN)
    deadline = Deadline(time.monotonic(), 250)
    said = promise_said(run.profile, 2, 1, deadline)
    assert said.startswith("time budget 250 s: 2 rounds of 2 subjects in 1 cell, then further rounds while they fit")
    assert "counting within what is left; ends by " in said and said.endswith(" UTC")
    assert ended_said(deadline).endswith("budget: within it")
    assert ended_said(Deadline(time.monotonic() - 300, 250)).endswith("budget: 50 s over it")


BUDGETED = """
[profiles.budgeted]
requests = 200
rounds = 1
warmup_requests = 0
max_rounds = 400
time_budget_s = 20

[profiles.budgeted.latency]
capacity_cell = "c1"
fractions = [0.25, 0.5, 0.75]
seconds = 2
rounds = 3
connections = 10
p99_target = "10 ms"

[profiles.budgeted.counting]
cells = ["c1"]
batches = 3
requests = 40
warmup_requests = 20
"""


@pytest.mark.integration
def test_a_real_run_ends_by_the_time_it_promised(toy: ToyRecipes) -> None:
    """Latency alone would take 27 s of a 20 s budget: the run says when it will end, cuts what does not fit (said),
    and ends by then, give or take one repetition, quiet machine or busy."""
    toy.add("budgeted", toy_subject(), conf=BUDGETED)
    done = run_invoke("recipe", "budgeted", "--profile", "budgeted", "--data-dir", str(toy.data_dir), env=toy.env)
    assert done.returncode == 0, done.stderr
    said = " ".join((done.stdout + done.stderr).split())  # the run's steps go to standard error
    assert re.search(r"time budget 20 s: 1 round of 1 subject in 1 cell, .* ends by \d\d:\d\d:\d\d UTC", said), said
    took = re.search(r"the run took (\d+) s of its 20 s budget: (within it|\d+ s over it)", said)
    assert took is not None, said
    run = load_run(list_runs(toy.data_dir / "budgeted")[-1])
    longest = max(rep.wall_s for subject in run.subjects for cell in subject.cells for rep in cell.repetitions)
    assert int(took.group(1)) <= 20 + longest + 1, (took.group(0), longest)
    assert run.latency is not None and "latency:" in said and "does not fit" in said  # cut, and said so
