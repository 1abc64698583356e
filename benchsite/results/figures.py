"""The one rule for whether a figure is usable, applied by every table, chart, pivot and claim.

A cell is flagged when any repetition failed, any request failed (ab's failures, wrk's
socket errors, a client's errors), any answer was not 2xx, or, in an ab cell, its median
reached half of what ab achieved against the ceiling's C server in the same cell (then ab,
not the server, may be the limit; with wrk the C server itself is the limit it measures).
A flagged cell is shown with its flags, drawn marked, and decides no claim.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.model.run import AbCell, RunDocument, SubjectRun
from benchsite.results.stats import CellSummary, summarize

CEILING_SHARE = 0.5  # a median at or above half the load tool's ceiling is flagged
FLAG_LEGEND = (
    "⚑ flagged: failed runs or requests, non-2xx answers, or at ab's own ceiling; "
    "the results table says which. A flagged figure decides no claim."
)


@dataclass(frozen=True)
class Figure:
    """One subject's cell: its summary and the reasons (if any) not to take it at face value."""

    summary: CellSummary
    flags: tuple[str, ...]

    @property
    def usable(self) -> bool:
        return not self.flags

    @property
    def status(self) -> str:
        return "ok" if self.usable else "FLAGGED: " + "; ".join(self.flags)


def ceiling_rps(run: RunDocument, cell: str) -> float | None:
    """The median req/s of the run's ceiling (a C server on a static file) in one cell."""
    ceiling = run.ceiling
    record = ceiling.cell(cell) if ceiling else None
    return summarize(record).rps_median if record else None


def ceiling_flag(run: RunDocument, subject: SubjectRun, cell: str, rps_median: float | None) -> str | None:
    record = subject.cell(cell)
    if subject.role != "server" or rps_median is None or not isinstance(record, AbCell):
        return None
    ceiling = ceiling_rps(run, cell)
    if not ceiling or rps_median < CEILING_SHARE * ceiling:
        return None
    return (
        f"at {100 * rps_median / ceiling:.0f}% of the load tool's ceiling: the tool, not the server, may be the limit"
    )


def figure(run: RunDocument, subject_name: str, cell_name: str) -> Figure | None:
    """The figure of one subject in one cell, or None where it has no such cell."""
    subject = run.subject(subject_name)
    cell = subject.cell(cell_name) if subject else None
    if subject is None or cell is None:
        return None
    summary = summarize(cell)
    flags = list(summary.problems)
    near_ceiling = ceiling_flag(run, subject, cell_name, summary.rps_median)
    if near_ceiling:
        flags.append(near_ceiling)
    return Figure(summary, tuple(flags))


def usable_figure(run: RunDocument, subject_name: str, cell_name: str) -> Figure | None:
    """The figure where it is usable; None where it is missing or flagged."""
    found = figure(run, subject_name, cell_name)
    return found if found is not None and found.usable else None
