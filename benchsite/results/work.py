"""Work per request, read back: instructions counted under callgrind beside the timed server CPU.

The counted instructions are the server's own user-space work for one request; its timed CPU per
request adds the kernel's share and depends on the machine's speed. Their quotient, nanoseconds of
server CPU per instruction, is what the machine contributes; the instructions are what the code does.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.model.counting import InstructionCount
from benchsite.results.intervals import Interval
from benchsite.results.metrics import METRICS
from benchsite.results.view import RunView


@dataclass(frozen=True)
class WorkRow:
    """One subject's counted cell: its instructions per request and what the timed rounds say beside it."""

    count: InstructionCount
    label: str
    server_cpu_us: float | None  # the timed rounds' median server CPU per request in the same cell

    @property
    def ns_per_instruction(self) -> float | None:
        """Server CPU time per instruction: the machine's share of the timed figure (and the kernel's)."""
        if self.count.per_request is None or self.server_cpu_us is None:
            return None
        return 1000 * self.server_cpu_us / self.count.per_request


def work_rows(view: RunView) -> list[WorkRow]:
    """Every count of a run, with the timed server CPU of the same subject and cell."""
    counting = view.run.counting
    if counting is None:
        return []
    labels = view.run.subject_labels
    rows = []
    for count in counting.counts:
        summary = view.summaries.get((count.subject, count.cell))
        cpu = summary.median(METRICS["server-cpu"]) if summary is not None else None
        rows.append(WorkRow(count, labels.get(count.subject, count.subject), cpu))
    return rows


@dataclass(frozen=True)
class WorkRatio:
    """How much more work one subject does than another per request, beside their timed ratio."""

    more: str  # the subject doing more work (the slower one)
    less: str
    cell: str
    instructions: float  # more's instructions per request ÷ less's
    spread: float  # the larger of the two counts' batch spreads, as a share
    timed: Interval | None  # less's req/s ÷ more's, from the timed rounds


def work_ratio(view: RunView, more: str, less: str, cell: str) -> WorkRatio | None:
    """The instructions ratio of two subjects in one cell and their timed req/s ratio (None without both counts)."""
    counting = view.run.counting
    if counting is None:
        return None
    a, b = counting.of(more, cell), counting.of(less, cell)
    if a is None or b is None or a.per_request is None or b.per_request is None:
        return None
    spread = max(a.spread or 0.0, b.spread or 0.0)
    return WorkRatio(more, less, cell, a.per_request / b.per_request, spread, view.ratio((less, cell), (more, cell)))
