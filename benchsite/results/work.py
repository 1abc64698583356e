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
class CpuSplit:
    """Where one subject's CPU per request goes in one cell: the server's user and kernel time, the load tool's."""

    subject: str
    label: str
    cell: str
    user_us: float
    kernel_us: float
    load_us: float | None

    @property
    def server_us(self) -> float:
        return self.user_us + self.kernel_us


def cpu_split(view: RunView, subject: str, cell: str) -> CpuSplit | None:
    """The median server CPU per request split by the kernel's share of the cell's CPU, summed over its good
    repetitions (clock ticks are fine enough in the total); None where the run did not record the split."""
    found = view.run.subject(subject)
    record = found.cell(cell) if found else None
    summary = view.summaries.get((subject, cell))
    if found is None or record is None or summary is None:
        return None
    reps = [rep for rep in record.repetitions if rep.ok and rep.server_system_s is not None]
    total = sum(rep.server_cpu_s for rep in reps)
    median = summary.median(METRICS["server-cpu"])
    if not reps or total <= 0 or median is None:
        return None
    kernel_share = min(1.0, sum(rep.server_system_s or 0.0 for rep in reps) / total)
    return CpuSplit(
        subject=subject,
        label=found.label,
        cell=cell,
        user_us=median * (1 - kernel_share),
        kernel_us=median * kernel_share,
        load_us=summary.median(METRICS["load-cpu"]),
    )


def cpu_splits(view: RunView, cells: tuple[str, ...]) -> list[CpuSplit]:
    """Every measured server's split in these cells, in the run's order."""
    found = (cpu_split(view, subject.name, cell) for subject in view.run.measured for cell in cells)
    return [split for split in found if split is not None]


@dataclass(frozen=True)
class WorkRow:
    """One subject's counted cell: its instructions per request and what the timed rounds say beside it."""

    count: InstructionCount
    label: str
    server_cpu_us: float | None  # the timed rounds' median server CPU per request in the same cell
    split: CpuSplit | None

    @property
    def user_ns_per_instruction(self) -> float | None:
        """User CPU time per counted instruction: how fast this machine runs the server's own code."""
        if self.count.per_request is None or self.split is None:
            return None
        return 1000 * self.split.user_us / self.count.per_request


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
        split = cpu_split(view, count.subject, count.cell)
        rows.append(WorkRow(count, labels.get(count.subject, count.subject), cpu, split))
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
    cpu: tuple[CpuSplit, CpuSplit] | None  # more's and less's CPU per request, split (None: not recorded)


def work_ratio(view: RunView, more: str, less: str, cell: str) -> WorkRatio | None:
    """The instructions ratio of two subjects in one cell and their timed req/s ratio (None without both counts)."""
    counting = view.run.counting
    if counting is None:
        return None
    a, b = counting.of(more, cell), counting.of(less, cell)
    if a is None or b is None or a.per_request is None or b.per_request is None:
        return None
    spread = max(a.spread or 0.0, b.spread or 0.0)
    split_more, split_less = cpu_split(view, more, cell), cpu_split(view, less, cell)
    cpu = (split_more, split_less) if split_more and split_less else None
    timed = view.ratio((less, cell), (more, cell))
    return WorkRatio(
        more=more, less=less, cell=cell, instructions=a.per_request / b.per_request, spread=spread, timed=timed, cpu=cpu
    )
