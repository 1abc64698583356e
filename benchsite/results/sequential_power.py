"""What the sequential rule would have answered on the power benchmark's A/B runs, and when: each run's rounds
replayed one by one (a sequential run measures exactly those rounds up to where it stops), beside what the fixed
design answered after all of them; and how often it calls an A/A change, simulated with a look after every
round."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from benchsite.model.run import RunDocument
from benchsite.results.comparing import paired_cells
from benchsite.results.deciding import replayed
from benchsite.results.intervals import LEVEL
from benchsite.results.power import power_cell, rounds_ended
from benchsite.results.view import RunView


@dataclass(frozen=True)
class Answered:
    """One run's -c 1 cell of the framework: whether time called a change, and when the rounds had answered."""

    called: bool
    work_called: bool  # counted after the rounds in either design: the same call, made once the rounds end
    decided: bool  # the rounds answered (a change, or none beyond the smallest that matters) before the last
    seconds: float  # when in the run the timed rounds ended (or would have, stopped by the sequential rule)


@dataclass(frozen=True)
class DesignRow:
    """One set of runs under one design: how many runs called a change in time, and the median time to answer."""

    label: str  # the set's label ("A/A", "1 % time"...)
    design: str  # "fixed, 64 rounds" or "sequential, ±5 %"
    answers: tuple[Answered, ...]

    @property
    def runs(self) -> int:
        return len(self.answers)

    @property
    def called(self) -> int:
        return sum(answer.called for answer in self.answers)

    @property
    def work_called(self) -> int:
        return sum(answer.work_called for answer in self.answers)

    @property
    def decided(self) -> int:
        return sum(answer.decided for answer in self.answers)

    @property
    def median_s(self) -> float:
        return statistics.median(answer.seconds for answer in self.answers)


def fixed_answers(runs: Sequence[RunDocument]) -> tuple[Answered, ...]:
    """Each run as it was made: its time interval looked at once, after all its rounds."""
    found = []
    for run in runs:
        cell = power_cell(paired_cells(RunView(run)))
        changed = bool(cell and cell.time_changed)
        found.append(Answered(changed, bool(cell and cell.work_changed), True, rounds_ended(run)))
    return tuple(found)


def sequential_answers(runs: Sequence[RunDocument], smallest: float) -> tuple[Answered, ...]:
    """Each run's rounds replayed with the sequential rule: where it would have stopped, and what it called then
    (a run never decided goes on to its last round, as the fixed design did)."""
    found = []
    for run in runs:
        replay = replayed(run, smallest)
        cell = power_cell(replay.state.cells)
        called = bool(cell and cell.time_changed)
        ended = replay.elapsed_s if replay.elapsed_s is not None else rounds_ended(run)
        worked = bool(cell and cell.work_changed)
        found.append(Answered(called, worked, replay.stopped_at is not None, ended))
    return tuple(found)


def simulated_false_alarms(runs: int, rounds: int, seed: int) -> tuple[float, float]:
    """Simulated A/A runs (normal per-round log ratios), each looked at after every round from the second on: the
    share in which the confidence sequence, and a fixed-sample t interval looked at as often, called a change."""
    import numpy as np
    from scipy import stats

    from benchsite.results.sequential import critical_t

    logs = np.random.default_rng(seed).standard_normal((runs, rounds))
    sequence, fixed = np.zeros(runs, dtype=bool), np.zeros(runs, dtype=bool)
    for made in range(2, rounds + 1):
        sample = logs[:, :made]
        t = np.abs(sample.mean(axis=1)) / (sample.std(axis=1, ddof=1) / np.sqrt(made))
        critical = critical_t(made, LEVEL)
        if critical is not None:
            sequence |= t > critical
        fixed |= t > stats.t.ppf(1 - (1 - LEVEL) / 2, made - 1)
    return float(sequence.mean()), float(fixed.mean())


def share_interval(count: int, total: int) -> tuple[float, float]:
    """A 95 % interval for a share of runs (Clopper-Pearson, from statsmodels)."""
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(count, total, alpha=1 - LEVEL, method="beta")
    return float(low), float(high)
