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
    cell_label: str  # as a reader knows it: "-c 1"
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
        more=more,
        less=less,
        cell=cell,
        cell_label=view.run.cell_label(cell),
        instructions=a.per_request / b.per_request,
        spread=spread,
        timed=timed,
        cpu=cpu,
    )


def work_said(ratio: WorkRatio, labels: dict[str, str], timed: bool = True) -> str:
    """The work ratio in words; with `timed`, what it says about the timed one: the parts each request's time is
    made of."""
    more, less = labels.get(ratio.more, ratio.more), labels.get(ratio.less, ratio.less)
    said = (
        f"Per request at {ratio.cell_label}, the {more} executes {ratio.instructions:.2f}× the instructions of the "
        f"{less} (each count's batches within ±{100 * ratio.spread:.2f} % of their median: the ratio is exact to "
        "about that)."
    )
    if not timed or ratio.timed is None:
        return said
    timed_ratio = ratio.timed
    direction = "below" if timed_ratio.value < ratio.instructions else "above"
    said += (
        f" Timed on this machine, the {less} answers {timed_ratio.value:.2f}× as many requests per second: the timed "
        f"ratio sits {direction} the work ratio because timing adds what the count leaves out"
    )
    if ratio.cpu is None:
        return said + ": the kernel's share of each request and the machine's time per instruction."
    top, bottom = ratio.cpu
    per_instruction = (top.user_us / bottom.user_us) / ratio.instructions  # the two's user time per instruction
    pace = (
        ", at about the same time per instruction (last column)."
        if abs(per_instruction - 1) < 0.05
        else f"; per instruction the {more}'s code takes {per_instruction:.2f}× the {less}'s time (last column)."
    )
    return said + (
        f". Of each request's server CPU, the kernel's share (accepting, reading, writing and closing the "
        f"connection) is {top.kernel_us:,.0f} µs for the {more} and {bottom.kernel_us:,.0f} µs for the {less}; "
        f"their own code takes {top.user_us:,.0f} and {bottom.user_us:,.0f} µs{pace} Their whole CPU per request "
        f"gives a ratio of {top.server_us / bottom.server_us:.2f}; what is left between it and the timed ratio is "
        "time outside the server's CPU that every request pays alike (the load tool's own work and the wait for it)."
    )
