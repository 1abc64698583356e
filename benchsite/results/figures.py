"""The one rule for whether a figure is usable, applied by every table, chart, pivot and claim.

A cell run is flagged when any repetition failed, any request failed (ab's failures, wrk's
socket errors, h2load's errors, a client's errors), any answer was not 2xx, or, with a load
tool that is itself the limit against the ceiling subject (ab: one thread), its median reached
half of what that tool achieved against the ceiling's C server in the same cell (then the tool,
not the server, may be the limit; with wrk or h2load the C server itself is the limit they find).
A flagged figure is shown with its flags, drawn marked, and decides no claim.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.results.stats import CellSummary

CEILING_SHARE = 0.5  # a median at or above half the load tool's ceiling is flagged
FLAG_LEGEND = (
    "⚑ flagged: failed runs or requests, non-2xx answers, or at ab's own ceiling; "
    "the results table says which. A flagged figure decides no claim."
)


@dataclass(frozen=True)
class Figure:
    """One subject's cell run: its summary and the reasons (if any) not to take it at face value."""

    summary: CellSummary
    flags: tuple[str, ...]

    @property
    def usable(self) -> bool:
        return not self.flags

    @property
    def status(self) -> str:
        return "ok" if self.usable else "FLAGGED: " + "; ".join(self.flags)


def ceiling_flag(rps_median: float | None, ceiling_rps: float | None) -> str | None:
    """The flag of a server's median at or above half of the load tool's own ceiling in that cell."""
    if rps_median is None or not ceiling_rps or rps_median < CEILING_SHARE * ceiling_rps:
        return None
    return (
        f"at {100 * rps_median / ceiling_rps:.0f}% of the load tool's ceiling: the tool, not the server, "
        "may be the limit"
    )
