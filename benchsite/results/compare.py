"""Two runs of a recipe side by side, cell by cell: the change in req/s with its interval (after pyperf's
compare_to). The runs were made at different times, so their repetitions are not paired: the change is
the ratio of the geometric means it prints, with a Welch t interval on the logarithms. Comparing many
cells at once, the intervals are simultaneous (Bonferroni: each at 1 - 0.05 / cells), and a change is
called where its interval excludes 1: one correction, so the verdict and the interval printed
beside it always agree.

Two runs of the same code differ by more than their repetitions' noise: a run's mean drifts from run to
run (the machine's state, where memory lands). That drift is estimated per cell from the machine's other
runs of the recipe (a random-effects model's between-run variance, statsmodels' combine_effects) and
widens each interval; without it, runs minutes apart were called different in half the same-code pairs."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchsite.results.comparing import batch_ratio, beyond_margin
from benchsite.results.intervals import Interval, simultaneous_level, unpaired_ratio_interval
from benchsite.results.view import RunView


@dataclass(frozen=True)
class CellChange:
    """One subject's cell in both runs: B's req/s over A's, with its interval and whether it changed."""

    subject: str
    cell: str
    mean_a: float | None  # the geometric mean of A's repetitions, req/s
    mean_b: float | None
    change: Interval | None  # B ÷ A, the ratio of the two means; None: fewer than two repetitions on a side
    p_value: float | None  # Bonferroni-adjusted over the cells compared
    note: str  # why a change could not be estimated, or a flag of either side

    @property
    def changed(self) -> bool:
        """The simultaneous interval of B ÷ A excludes 1 (no change): the rule every comparison calls a change by,
        with no margin (the drift between runs is already in the interval)."""
        return beyond_margin(self.change, 0.0)


MIN_RUNS_FOR_DRIFT = 3  # runs of one machine a cell's drift is estimated from


@dataclass(frozen=True)
class Drift:
    """How far a cell's log mean moves from run to run on one machine, beyond its repetitions' noise."""

    by_cell: Mapping[tuple[str, str], float]  # the standard deviation, on the log scale
    runs: int

    @property
    def median(self) -> float | None:
        return statistics.median(self.by_cell.values()) if self.by_cell else None


def run_drift(views: Sequence[RunView]) -> Drift:
    """Each cell's between-run standard deviation over these runs (those with two or more counted repetitions
    of it; cells with fewer than MIN_RUNS_FOR_DRIFT such runs get none)."""
    import numpy as np
    from statsmodels.stats.meta_analysis import combine_effects  # imported when a drift is first estimated

    by_cell: dict[tuple[str, str], float] = {}
    cells = {(s.name, c.name) for view in views for s in view.run.subjects for c in s.cells}
    for subject, cell in sorted(cells):
        means, variances = [], []
        for view in views:
            logs = np.log(list((view.round_values(subject, cell, usable_only=False) or {}).values()))
            if len(logs) >= 2:
                means.append(logs.mean())
                variances.append(max(float(logs.var(ddof=1)) / len(logs), 1e-12))
        if len(means) >= MIN_RUNS_FOR_DRIFT:
            result = combine_effects(np.array(means), np.array(variances), method_re="iterated", use_t=False)
            by_cell[subject, cell] = float(np.sqrt(result.tau2))
    return Drift(by_cell, len(views))


def compare_runs(a: RunView, b: RunView, drift: Drift | None = None) -> list[CellChange]:
    """Every (subject, cell) the two runs share, in A's order; each interval widened by the cell's drift
    where one is known."""
    shared = [
        (subject.name, cell.name)
        for subject in a.run.subjects
        if b.run.subject(subject.name) is not None
        for cell in subject.cells
        if a.figure(subject.name, cell.name) is not None and b.figure(subject.name, cell.name) is not None
    ]
    level = simultaneous_level(len(shared))  # simultaneous intervals over every cell compared
    found = []
    for subject, cell in shared:
        values_a = list((a.round_values(subject, cell, usable_only=False) or {}).values())
        values_b = list((b.round_values(subject, cell, usable_only=False) or {}).values())
        spread = drift.by_cell.get((subject, cell), 0.0) if drift else 0.0
        found.append((subject, cell, values_a, values_b, unpaired_ratio_interval(values_b, values_a, level, spread)))
    changes = []
    for subject, cell, values_a, values_b, estimate in found:
        figure_a, figure_b = a.figure(subject, cell), b.figure(subject, cell)
        assert figure_a is not None and figure_b is not None
        flags = [
            f"{run} flagged: {'; '.join(f.flags)}" for run, f in (("A", figure_a), ("B", figure_b)) if not f.usable
        ]
        note = "; ".join(flags) or ("" if estimate else "fewer than two usable repetitions on a side")
        changes.append(
            CellChange(
                subject=subject,
                cell=cell,
                mean_a=_geometric_mean(values_a),
                mean_b=_geometric_mean(values_b),
                change=estimate[0] if estimate else None,
                p_value=min(1.0, estimate[1] * len(shared)) if estimate else None,
                note=note,
            )
        )
    return changes


def blind_below(drift: Drift, cells: int) -> float | None:
    """The smallest change two runs' time can show on this machine, from its median drift alone: the half-width
    of a simultaneous interval whose only noise is the two runs' drift (None: no drift known)."""
    import numpy as np

    if drift.median is None:
        return None
    from scipy.stats import norm

    level = simultaneous_level(cells)
    return float(np.expm1(norm.ppf(1 - (1 - level) / 2) * np.sqrt(2) * drift.median))


@dataclass(frozen=True)
class WorkChange:
    """One subject's counted cell in both runs: instructions per request, B ÷ A with its interval."""

    subject: str
    cell: str
    per_request_a: float
    per_request_b: float
    change: Interval | None  # None: fewer than two batches on a side

    @property
    def changed(self) -> bool:
        """Beyond what two processes of the same code differ by (see `benchsite.results.comparing.MARGIN`)."""
        return beyond_margin(self.change)


def compare_work(a: RunView, b: RunView) -> list[WorkChange]:
    """Every (subject, cell) both runs counted under callgrind: instructions do not move with the machine's load
    or speed, so runs of different days (or machines of the same architecture) compare. Batches paired by position
    (`batch_ratio`), intervals simultaneous over the cells (Bonferroni)."""
    if a.run.counting is None or b.run.counting is None:
        return []
    pairs = []
    for count_a in a.run.counting.counts:
        count_b = b.run.counting.of(count_a.subject, count_a.cell)
        if count_b is not None and count_a.per_request and count_b.per_request:
            pairs.append((count_a, count_b))
    level = simultaneous_level(len(pairs))
    found = []
    for count_a, count_b in pairs:
        batches_a = [batch.per_request for batch in count_a.batches]
        batches_b = [batch.per_request for batch in count_b.batches]
        assert count_a.per_request is not None and count_b.per_request is not None
        change = batch_ratio(batches_a, batches_b, level)
        found.append(
            WorkChange(
                subject=count_a.subject,
                cell=count_a.cell,
                per_request_a=count_a.per_request,
                per_request_b=count_b.per_request,
                change=change,
            )
        )
    return found


def _geometric_mean(values: list[float]) -> float | None:
    import numpy as np

    return float(np.exp(np.mean(np.log(values)))) if values and min(values) > 0 else None


def different_setups(a: RunView, b: RunView) -> str:
    """A warning when two runs come from different machines or set-ups ("" when they do not)."""
    problems = []
    if a.run.machine.id != b.run.machine.id:
        problems.append(f"different machines ({a.run.machine.name} and {b.run.machine.name})")
    if (a.run.topology is None) != (b.run.topology is None):
        problems.append("one ran on one machine, the other across two hosts")
    if not problems:
        return ""
    return (
        f"warning: these runs come from {' and '.join(problems)}: a change mixes the software's with the "
        "machine's; compare runs of one machine"
    )


def busy_runs(a: RunView, b: RunView) -> str:
    """A warning naming each run measured on a busy machine ("" when neither was)."""
    busy = [
        f"{side} ({view.run.run_id}): {view.interference_said()}" for side, view in (("A", a), ("B", b)) if view.busy
    ]
    if not busy:
        return ""
    return (
        f"warning: {'; '.join(busy)}; each side rests on its undisturbed repetitions, but a busy machine can bias "
        "what remains: re-run it on a quiet machine before reading a change"
    )
