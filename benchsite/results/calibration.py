"""What the A/A calibration runs say of the harness's intervals: every ratio between copies of one app
is truly 1, so each interval either covers 1 or does not, and `invoke compare` either flags a change
that is not there or does not.

Each run's ratios are read from its first 2, 3, ... rounds too, so the same runs show how coverage
and width change with the number of rounds a run makes before it decides.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from itertools import combinations

from benchsite.results.compare import compare_runs, run_drift
from benchsite.results.intervals import Interval, half_width, paired_rounds, ratio_intervals
from benchsite.results.view import RunView


@dataclass(frozen=True)
class AtRounds:
    """The A/A ratio intervals read from a run's first `rounds` rounds."""

    rounds: int
    intervals: tuple[Interval, ...]

    @property
    def covering(self) -> int:
        return sum(1 for i in self.intervals if i.low is not None and i.high is not None and i.low <= 1 <= i.high)

    @property
    def coverage(self) -> float:
        return self.covering / len(self.intervals)

    @property
    def median_half_width(self) -> float:
        return statistics.median(w for i in self.intervals if (w := half_width(i)) is not None)


@dataclass(frozen=True)
class CompareRate:
    """`invoke compare` on pairs of runs of identical code: how often it flags a change."""

    pairs: int
    pairs_flagged: int
    cells: int
    cells_flagged: int


@dataclass(frozen=True)
class Calibration:
    runs: int
    by_rounds: tuple[AtRounds, ...]  # 2 rounds, 3 rounds, ... up to the fewest any run made
    compare: CompareRate

    @property
    def full(self) -> AtRounds:
        """The intervals from every round the runs made."""
        return self.by_rounds[-1]


@dataclass(frozen=True)
class Slicing:
    """One way of slicing the same measurement (a profile of the calibration recipe): how wide its
    intervals come out for the machine time it takes."""

    profile: str
    requests: int  # per slice (one repetition)
    rounds: int
    runs: int
    median_half_width: float
    minutes_per_run: float  # the measuring time, median over the runs

    @property
    def width_per_minute(self) -> float:
        """The half-width scaled to one minute of measuring (width shrinks as 1/sqrt(time))."""
        return self.median_half_width * self.minutes_per_run**0.5


def _measuring_s(view: RunView) -> float:
    """A run's measuring time: from its first round to its last (start-up of each slice included)."""
    if view.run.rounds is not None:
        return view.run.rounds.elapsed_s
    return sum(rep.wall_s for s in view.run.subjects for c in s.cells for rep in c.repetitions)


def slicing(profile: str, views: list[RunView]) -> Slicing:
    """The intervals of every round of these runs, and the time the runs took."""
    rounds = min(min(len(c.repetitions) for s in v.run.subjects for c in s.cells) for v in views)
    widths = [w for view in views for i in aa_intervals(view, rounds) if (w := half_width(i)) is not None]
    minutes = [_measuring_s(view) / 60 for view in views]
    return Slicing(
        profile=profile,
        requests=views[0].run.profile.requests,
        rounds=rounds,
        runs=len(views),
        median_half_width=statistics.median(widths),
        minutes_per_run=statistics.median(minutes),
    )


def aa_intervals(view: RunView, rounds: int) -> list[Interval]:
    """Every ratio between two copies of the app, cell by cell, from the run's first `rounds` rounds."""
    ratio_lists = []
    names = view.measured_names()
    for cell in view.run.cell_names:
        values = {name: view.round_values(name, cell) for name in names}
        for top, bottom in combinations(names, 2):
            a, b = values[top], values[bottom]
            if a is None or b is None:
                continue
            first = {r: v for r, v in a.items() if r <= rounds}, {r: v for r, v in b.items() if r <= rounds}
            ratio_lists.append(paired_rounds(*first))
    return [i for i in ratio_intervals(ratio_lists) if i is not None and i.low is not None]


def calibrate(views: list[RunView]) -> Calibration:
    """Coverage and width by rounds over every run, and compare's rate over consecutive pairs of runs."""
    fewest = min(min(len(c.repetitions) for s in v.run.subjects for c in s.cells) for v in views)
    by_rounds = tuple(
        AtRounds(rounds, tuple(i for view in views for i in aa_intervals(view, rounds)))
        for rounds in range(2, fewest + 1)
    )
    pairs = [(views[i], views[i + 1]) for i in range(0, len(views) - 1, 2)]  # disjoint: each run once
    drift = run_drift(views)  # as `invoke compare` counts it: from the machine's runs
    changes = [compare_runs(a, b, drift) for a, b in pairs]
    rate = CompareRate(
        len(pairs),
        sum(any(c.changed for c in found) for found in changes),
        sum(len(found) for found in changes),
        sum(c.changed for found in changes for c in found),
    )
    return Calibration(len(views), by_rounds, rate)
