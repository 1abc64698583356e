"""Two runs of a recipe side by side, cell by cell: the change in req/s with its interval (after pyperf's
compare_to). The runs were made at different times, so their repetitions are not paired: the change is
the ratio of geometric means with a Welch t interval on the logarithms."""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.results.intervals import Interval, unpaired_ratio_interval
from benchsite.results.view import RunView


@dataclass(frozen=True)
class CellChange:
    """One subject's cell in both runs: B's req/s over A's, with its interval and whether it is significant."""

    subject: str
    cell: str
    median_a: float | None
    median_b: float | None
    change: Interval | None  # None: fewer than two usable repetitions on a side
    p_value: float | None
    note: str  # why a change could not be estimated, or a flag of either side

    @property
    def significant(self) -> bool:
        """The interval of B ÷ A excludes 1 (no change)."""
        return bool(
            self.change and self.change.low and self.change.high and (self.change.low > 1 or self.change.high < 1)
        )


def compare_runs(a: RunView, b: RunView) -> list[CellChange]:
    """Every (subject, cell) the two runs share, in A's order."""
    changes = []
    for subject in a.run.subjects:
        if b.run.subject(subject.name) is None:
            continue
        for cell in subject.cells:
            figure_a, figure_b = a.figure(subject.name, cell.name), b.figure(subject.name, cell.name)
            if figure_a is None or figure_b is None:
                continue
            values_a = a.round_values(subject.name, cell.name, usable_only=False) or {}
            values_b = b.round_values(subject.name, cell.name, usable_only=False) or {}
            found = unpaired_ratio_interval(list(values_b.values()), list(values_a.values()))
            flags = [
                f"{run} flagged: {'; '.join(f.flags)}" for run, f in (("A", figure_a), ("B", figure_b)) if not f.usable
            ]
            note = "; ".join(flags) or ("" if found else "fewer than two usable repetitions on a side")
            changes.append(
                CellChange(
                    subject.name,
                    cell.name,
                    figure_a.summary.median(),
                    figure_b.summary.median(),
                    found[0] if found else None,
                    found[1] if found else None,
                    note,
                )
            )
    return changes


def describe_change(change: CellChange) -> str:
    """+12.3 % [+4.1 % … +21.0 %], significant; or why there is no estimate."""
    if change.change is None or change.change.low is None or change.change.high is None:
        return change.note or "—"
    verdict = "significant" if change.significant else "not significant"
    text = (
        f"{100 * (change.change.value - 1):+.1f} % [{100 * (change.change.low - 1):+.1f} % … "
        f"{100 * (change.change.high - 1):+.1f} %], {verdict}"
    )
    return text + (f" ({change.note})" if change.note else "")
