"""What the power benchmark's A/B runs show (`invoke powerbench`): for each injected slowdown, how often each
currency called a change, and how large the change it measured was. Recomputed from the runs alone."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from benchsite.model.run import RunDocument
from benchsite.results.comparing import PairedCell, paired_cells
from benchsite.results.view import RunView

PILOT = "pilot"  # the label's first word of the run that calibrates the loop: not a level of the curve
# The subject and cell the power benchmark slows down by a known share and reads back (its A/A runs are sliced
# there too): named here alone.
POWER_SUBJECT, POWER_CELL = "framework", "c1"


def power_cell(cells: Sequence[PairedCell]) -> PairedCell | None:
    """The comparison of the power benchmark's subject and cell among a run's (None: not measured both ways)."""
    return next((c for c in cells if c.subject == POWER_SUBJECT and c.cell == POWER_CELL), None)


@dataclass(frozen=True)
class PowerLevel:
    """One injected slowdown's A/B runs, summarised."""

    label: str
    cells: tuple[PairedCell, ...]  # the framework's -c 1 in each run
    rounds_s: tuple[float, ...] = ()  # when each run's timed rounds ended, in seconds after it began

    @property
    def median_rounds_s(self) -> float | None:
        """The median time the runs' timed rounds took to answer (a sequential run stops once decided)."""
        return statistics.median(self.rounds_s) if self.rounds_s else None

    @property
    def runs(self) -> int:
        return len(self.cells)

    @property
    def time_called(self) -> int:
        """Runs whose req/s interval excludes no change."""
        return sum(cell.time_changed for cell in self.cells)

    @property
    def work_called(self) -> int:
        return sum(cell.work_changed for cell in self.cells)

    @property
    def time_change(self) -> float | None:
        """The median over the runs of B ÷ A in req/s, minus one (-0.05: 5 % fewer req/s)."""
        return _median_change([cell.time.value for cell in self.cells if cell.time])

    @property
    def work_change(self) -> float | None:
        return _median_change([cell.work.value for cell in self.cells if cell.work])

    @property
    def time_half_width(self) -> float | None:
        """The median half-width of the runs' time intervals, as a share."""
        widths = [cell.time.relative_half_width for cell in self.cells if cell.time]
        return statistics.median(w for w in widths if w is not None) if any(w is not None for w in widths) else None


def _median_change(ratios: list[float]) -> float | None:
    return statistics.median(ratios) - 1 if ratios else None


def power_level(label: str, views: Sequence[RunView]) -> PowerLevel:
    """The framework's -c 1 cell of each A/B run of one level (a run without it counts as not calling)."""
    found = []
    for view in views:
        cell = power_cell(paired_cells(view))
        no_copy_ran_it = PairedCell(subject=POWER_SUBJECT, a="", b="", cell=POWER_CELL, time=None, work=None)
        found.append(cell if cell is not None else no_copy_ran_it)
    return PowerLevel(label, tuple(found), tuple(rounds_ended(view.run) for view in views))


def rounds_ended(run: RunDocument) -> float:
    """When a run's timed rounds ended, in seconds after it began."""
    return max(
        (rep.started_after_s or 0.0) + rep.wall_s for s in run.subjects for c in s.cells for rep in c.repetitions
    )


def power_said(where: str, levels: Sequence[PowerLevel]) -> str:
    """What the A/B runs of one record called, in words: "On a quiet machine (...), an unchanged app (A/A) was
    called changed in 0 of 10 runs by time and 1 of 10 by work; 1 % time: seen in 8 of 10 runs by time and 10 of
    10 by work". The injected change is named as the level's label names it."""
    said = []
    for level in levels:
        name = level.label.split(" (")[0]
        counts = f"{level.time_called} of {level.runs} runs by time and {level.work_called} of {level.runs} by work"
        if name == "A/A":
            said.append(f"an unchanged app (A/A) was called changed in {counts}")
        else:
            said.append(f"a {name} slowdown was seen in {counts}")
    return f"{where}, {'; '.join(said)}."
