"""The one rule for whether a figure is usable, applied by every table, chart, pivot and claim.

A cell run is flagged when any repetition failed, any request failed (ab's failures, wrk's
socket errors, h2load's errors, a client's errors), or any answer was not 2xx. With a load tool
that can itself be the limit (ab: one thread), a figure is *limited by the load tool* when the
run's own CPU records say so: the tool's pinned CPU was saturated, or the figure reached half of
what the tool achieved against the ceiling's C server while the server's CPU still had headroom.
A server whose CPU was busy and a tool whose CPU was not is the limit itself, however close to
the ceiling. A flagged figure is shown with its flags, drawn marked, and decides no claim; a
limited one says so in the claim's state.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.results.stats import CellSummary

CEILING_SHARE = 0.5  # a median at or above half the load tool's ceiling is near it...
SERVER_BUSY_PERCENT = 80.0  # ...and tool-limited unless the server's CPU was at least this busy
TOOL_SATURATED_PERCENT = 90.0  # a load tool's pinned CPU this busy is the limit, wherever the figure stands
# The rule `tool_limited_why` applies, as a page states it.
FLAG_RULE = (
    f"A server's figure is flagged as limited by the load tool when the tool's own CPU was at least "
    f"{TOOL_SATURATED_PERCENT:.0f} % busy, or when the figure reached {100 * CEILING_SHARE:.0f} % of what the same "
    f"command achieved against the ceiling's C server while the server's CPU was under {SERVER_BUSY_PERCENT:.0f} % "
    "busy. A server whose CPU was the busy one set its own pace and is not flagged, however close to the ceiling "
    "(or beyond it) its figure lies."
)
FLAG_LEGEND = (
    "⚑ flagged: failed runs or requests, non-2xx answers, or limited by the load tool (its CPU "
    "saturated, or near its ceiling while the server's CPU had headroom); the results table says which. "
    "A flagged figure decides no claim."
)


@dataclass(frozen=True)
class Figure:
    """One subject's cell run: its summary and the reasons (if any) not to take it at face value."""

    summary: CellSummary
    flags: tuple[str, ...]
    tool_limited: bool = False  # one of the flags says the load tool, not the server, set the figure

    @property
    def usable(self) -> bool:
        return not self.flags

    @property
    def status(self) -> str:
        return "ok" if self.usable else "FLAGGED: " + "; ".join(self.flags)

    @property
    def tool_limited_only(self) -> bool:
        """Flagged only because the load tool was the limit: it ran, and has numbers, but not the server's."""
        return self.tool_limited and len(self.flags) == 1


def tool_limited_why(
    rps: float | None, ceiling_rps: float | None, load_share: float | None, server_share: float | None
) -> str | None:
    """Why the load tool, not the server, set a figure (medians: req/s, the tool's and the server's CPU
    in % of one CPU), or None when the run's CPU records show the server was the limit."""
    if load_share is not None and load_share >= TOOL_SATURATED_PERCENT:
        return f"limited by the load tool: its CPU was {load_share:.0f}% busy"
    if rps is None or not ceiling_rps or rps < CEILING_SHARE * ceiling_rps:
        return None
    if server_share is not None and server_share >= SERVER_BUSY_PERCENT:
        return None  # the server's CPU was the busy one: it set the pace
    busy = "not recorded" if server_share is None else f"only {server_share:.1f}% busy"
    return (
        f"limited by the load tool: at {100 * rps / ceiling_rps:.0f}% of its ceiling while the server's CPU was {busy}"
    )
