"""The sequential design: its Bayes factor against the published one, its false-alarm rate when an A/A run is
looked at after every round (simulated), and its rule replayed on committed rounds whose answer is known."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from benchsite.model.run import RunDocument
from benchsite.results.change_words import change_said, needs_factors
from benchsite.results.comparing import comparison_sets, paired_cells
from benchsite.results.deciding import (
    answered_said,
    first_rounds,
    looked,
    replayed,
)
from benchsite.results.design import SequentialDesign
from benchsite.results.factors import factor, percent_or_factor
from benchsite.results.intervals import LEVEL, Interval, ratio_interval
from benchsite.results.sequential import critical_t, log_bayes_factor, sequence_interval, within
from benchsite.results.store import load_run
from benchsite.results.view import RunView
from committed import COMMITTED_DATA

FIXED_SWEEP = COMMITTED_DATA / "cherrypy-speed" / "20261126T175644.478812Z-cheroot-sweep"
SEQUENTIAL_AB = COMMITTED_DATA / "experiments" / "versus" / "cherrypy-speed" / "20261127T150521.998138Z-versus"
POWER_A_A = [
    "20261126T231957.750900Z-power",
    "20261126T232928.442041Z-power",
    "20261126T233902.527765Z-power",
    "20261126T234844.777654Z-power",
    "20261126T235833.263474Z-power",
]


def test_the_bayes_factor_is_the_published_one() -> None:
    """Rouder et al. (2009)'s JZS Bayes factor of a one-sample t test, as JASP and pingouin publish it: t = 3.5
    from 20 values with the Cauchy prior's scale 0.707 gives 17.185."""
    assert round(math.exp(log_bayes_factor(3.5, 20, 0.707)), 3) == 17.185
    assert log_bayes_factor(0.0, 20) < 0 < log_bayes_factor(3.0, 20) < log_bayes_factor(4.0, 20)
    assert log_bayes_factor(5.0, 1) == 0.0  # one value says nothing about a mean with unknown spread


def test_the_sequence_is_wider_than_a_t_interval_and_none_at_two_rounds() -> None:
    ratios = [0.98, 1.01, 0.97, 1.02, 0.99, 1.0, 0.985, 1.005]
    fixed, sequential = ratio_interval(ratios), sequence_interval(ratios)
    assert fixed is not None and sequential is not None
    assert sequential.value == pytest.approx(fixed.value)
    assert sequential.low is not None and fixed.low is not None and sequential.low < fixed.low
    assert critical_t(2) is None and sequence_interval([0.5, 0.51]) == Interval(
        pytest.approx(math.sqrt(0.5 * 0.51)), None, None, LEVEL, 2
    )


def peeked(logs: np.ndarray, interval: object) -> float:
    """The share of simulated A/A runs (rows of per-round log ratios) whose interval excluded 1 at any look from
    the second round on."""
    called = 0
    for run in logs:
        ratios = np.exp(run)
        for made in range(2, len(run) + 1):
            found = interval(list(ratios[:made]))  # type: ignore[operator]
            if found is not None and found.low is not None and (found.low > 1 or found.high < 1):
                called += 1
                break
    return called / len(logs)


def test_a_a_runs_looked_at_after_every_round_call_a_change_within_the_level() -> None:
    """2,000 simulated A/A runs of 48 rounds, looked at after every round: the confidence sequence calls a change
    in at most 5 % of them (about 2 %); a t interval looked at as often calls one in far more than 5 %."""
    rng = np.random.default_rng(20261127)
    logs = rng.standard_normal((2000, 48)) * 0.03
    assert peeked(logs, sequence_interval) <= 1 - LEVEL
    assert peeked(logs[:400], ratio_interval) > 0.15


def test_a_change_in_simulated_rounds_is_called_in_its_direction() -> None:
    rng = np.random.default_rng(7)
    logs = np.log(0.9) + rng.standard_normal(30) * 0.03  # 10 % slower, 3 % noise a round
    found = sequence_interval(list(np.exp(logs)))
    assert found is not None and found.high is not None and found.high < 1


def test_within_and_its_words() -> None:
    narrow = Interval(1.01, 0.98, 1.04, LEVEL, 20)
    assert within(narrow, 0.05) and not within(narrow, 0.03) and not within(narrow, 0.0)
    assert change_said(narrow, False, 0.0, smallest=0.05).endswith("no change beyond ±5 %")
    assert change_said(narrow, False, 0.0, smallest=0.03).endswith("undecided")
    assert change_said(None, False, 0.0, smallest=0.05) == "undecided: too few rounds for an interval"


def sweep_run() -> RunDocument:
    return load_run(FIXED_SWEEP)


def test_a_fixed_sweep_replayed_round_by_round_calls_the_stall_and_nothing_small() -> None:
    """The committed cheroot sweep (five rounds, fixed design), replayed: after two rounds the sequence can say
    nothing; after five, 8.1.0 is called slower than 8.0.0 on kept-alive connections at -c 1 and 8.4.8 faster than
    8.3.1, and no step between releases at -c 1 or -c 10 is called."""
    run = sweep_run()
    assert looked(RunView(first_rounds(run, 2))).undecided == looked(RunView(first_rounds(run, 2))).cells
    state = looked(RunView(first_rounds(run, 5, 0.05)))
    steps = {(cell.a, cell.b, cell.cell): cell for cell in state.cells}
    stall = steps["raw-wsgi-8_0_0", "raw-wsgi-8_1_0", "c1-k"]
    back = steps["raw-wsgi-8_3_1", "raw-wsgi-8_4_8", "c1-k"]
    assert stall.time_changed and stall.time is not None and stall.time.value < 0.01
    assert back.time_changed and back.time is not None and back.time.value > 100
    assert not any(cell.time_changed for cell in state.cells if cell.cell in ("c1", "c10"))


def test_a_sweep_compares_each_release_with_the_newest_and_with_the_one_before() -> None:
    run = sweep_run()
    newest, steps = comparison_sets(RunView(run))
    assert run.variants is not None
    releases = len(run.variants.variants)
    assert len(newest) == len(steps) == releases - 1
    assert {reference for _, reference, _ in newest} == {"raw-wsgi-11_1_2"}
    assert steps[0][1:] == ("raw-wsgi-6_0_0", "raw-wsgi-6_1_2")


def test_a_sequential_run_stopped_each_cell_at_the_round_its_rule_decided_it() -> None:
    """The committed sequential A/B run of cheroot 8.0.0 against 8.1.0: each kept-alive cell was last measured
    in the first round after which its interval was decided, called 8.1.0 slower; the cells never decided were
    measured to the run's last round, and the run says why it stopped."""
    run = load_run(SEQUENTIAL_AB)
    assert run.profile.sequential and run.rounds is not None
    side_b = run.subject("raw-wsgi-b")
    assert side_b is not None
    last = {cell.name: max(rep.index for rep in cell.repetitions) for cell in side_b.cells}
    for name in ("c1-k", "c10-k"):
        decided = next(
            made
            for made in range(2, last[name] + 1)
            if any(c.cell == name and c.time_decided for c in looked(RunView(first_rounds(run, made))).cells)
        )
        assert decided == last[name] < run.rounds.made
    final = {cell.cell: cell for cell in looked(RunView(run)).cells}
    assert all(final[name].time_changed and final[name].time.value < 0.05 for name in ("c1-k", "c10-k"))  # type: ignore[union-attr]
    for cell in final.values():
        assert cell.time_decided or last[cell.cell] == run.rounds.made
    assert run.rounds.stopped


@pytest.mark.parametrize("run_id", POWER_A_A)
def test_committed_a_a_rounds_replayed_never_call_a_change(run_id: str) -> None:
    """A/A runs of the power benchmark (64 rounds each), the sequential rule applied after every round: no look
    calls a change in time (their answer is known: the same app on both sides)."""
    run = load_run(COMMITTED_DATA / "experiments" / "power" / "cherrypy-speed" / run_id)
    last = max(rep.index for rep in run.subjects[0].cells[0].repetitions)
    for made in range(2, last + 1, 3):
        assert not any(cell.time_changed for cell in looked(RunView(first_rounds(run, made, 0.01))).cells)
    assert replayed(run, 0.01).stopped_at is None or not any(c.time_changed for c in replayed(run, 0.01).state.cells)


def test_a_sequential_run_says_its_answer_first_and_what_its_time_bound_cut_short() -> None:
    """The answer in words (each called cell's factor, the others undecided), and each cut-short cell's requests
    as its raw outputs count them."""
    view = RunView(load_run(SEQUENTIAL_AB))
    cells = paired_cells(view)
    said = answered_said(view, cells)
    assert view.run.rounds is not None and said.startswith(f"Answered after {view.run.rounds.made} rounds")
    factors = any(needs_factors(cell.time) for cell in cells)  # one format, as the table's column
    for cell in cells:
        name = f"{cell.subject} {view.run.cell_label(cell.cell)}"
        if cell.time_changed and cell.time is not None and not cell.time_bound:
            ratio = cell.time.value
            assert f"{name} {factor(ratio) if factors else percent_or_factor(ratio)}" in said
        elif not cell.time_decided:
            assert name in said.split("; ")[-1] and "undecided" in said
    side_b = view.run.subject("raw-wsgi-b")
    assert side_b is not None
    cut = side_b.cell("c1-k")
    assert cut is not None
    raw = [(SEQUENTIAL_AB / rep.raw_output).read_text() for rep in cut.repetitions]
    made = sorted({int(re.search(r"Complete requests:\s+(\d+)", text).group(1)) for text in raw})  # type: ignore[union-attr]
    span = f"{made[0]:,}" if len(made) == 1 else f"{made[0]:,}-{made[-1]:,}"
    named = f"{side_b.label} {view.run.cell_label('c1-k')} ({span} requests a repetition)"
    assert made[-1] < cut.requests and named in SequentialDesign().ended_said(view)
