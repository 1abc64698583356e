"""Two runs of a recipe side by side, cell by cell: the change in req/s with its interval (after pyperf's
compare_to). The runs were made at different times, so their repetitions are not paired: the change is
the ratio of the geometric means it prints, with a Welch t interval on the logarithms. Comparing many
cells at once, the intervals are simultaneous (Bonferroni: each at 1 - 0.05 / cells), and a change is
significant where its interval excludes 1: one correction, so the verdict and the interval printed
beside it always agree."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchsite.results.intervals import LEVEL, Interval, unpaired_ratio_interval
from benchsite.results.view import RunView


@dataclass(frozen=True)
class CellChange:
    """One subject's cell in both runs: B's req/s over A's, with its interval and whether it is significant."""

    subject: str
    cell: str
    mean_a: float | None  # the geometric mean of A's repetitions, req/s
    mean_b: float | None
    change: Interval | None  # B ÷ A, the ratio of the two means; None: fewer than two repetitions on a side
    p_value: float | None  # Bonferroni-adjusted over the cells compared
    note: str  # why a change could not be estimated, or a flag of either side

    @property
    def significant(self) -> bool:
        """The simultaneous interval of B ÷ A excludes 1 (no change)."""
        return bool(
            self.change and self.change.low and self.change.high and (self.change.low > 1 or self.change.high < 1)
        )


def compare_runs(a: RunView, b: RunView) -> list[CellChange]:
    """Every (subject, cell) the two runs share, in A's order."""
    shared = [
        (subject.name, cell.name)
        for subject in a.run.subjects
        if b.run.subject(subject.name) is not None
        for cell in subject.cells
        if a.figure(subject.name, cell.name) is not None and b.figure(subject.name, cell.name) is not None
    ]
    level = 1 - (1 - LEVEL) / max(len(shared), 1)  # simultaneous intervals over every cell compared
    found = []
    for subject, cell in shared:
        values_a = list((a.round_values(subject, cell, usable_only=False) or {}).values())
        values_b = list((b.round_values(subject, cell, usable_only=False) or {}).values())
        found.append((subject, cell, values_a, values_b, unpaired_ratio_interval(values_b, values_a, level)))
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
                subject,
                cell,
                _geometric_mean(values_a),
                _geometric_mean(values_b),
                estimate[0] if estimate else None,
                min(1.0, estimate[1] * len(shared)) if estimate else None,
                note,
            )
        )
    return changes


def _geometric_mean(values: list[float]) -> float | None:
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


def describe_change(change: CellChange) -> str:
    """+12.3 % [+4.1 % … +21.0 %], significant; or why there is no estimate."""
    if change.change is None or change.change.low is None or change.change.high is None:
        return change.note or "—"
    verdict = "significant" if change.significant else "not significant"  # after Bonferroni's correction
    text = (
        f"{100 * (change.change.value - 1):+.1f} % [{100 * (change.change.low - 1):+.1f} % … "
        f"{100 * (change.change.high - 1):+.1f} %], {verdict}"
    )
    return text + (f" ({change.note})" if change.note else "")
