"""What every load tool shares: value types with ranges, the parsed report's base, the stored
repetition and cell-run records, and the description each tool registers.

A *cell* is one load setting a recipe declares (tool and parameters); a *cell run* is what one
subject did in one cell: its repetitions, each with the tool's raw output parsed into a result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Generic, Literal, Self, TypeVar

from pydantic import Field, ValidationError, model_validator

from benchsite.errors import BenchError
from benchsite.records import InnerPath, Line, Name, Pair, Record, Seq, UrlPath
from benchsite.tools.memory import MemoryPeak

# A count of requests, bytes or errors.
Count = Annotated[int, Field(ge=0, le=10**15)]
# A non-negative measured quantity (seconds, milliseconds, bytes per second), finite and below any real run's.
Positive = Annotated[float, Field(ge=0, le=1e12)]
# Requests per second: no machine serves a billion.
Rate = Annotated[float, Field(ge=0, le=1e9)]
# (percent served, milliseconds) pairs, e.g. ((50, 1.0), (99, 4.0), (100, 14.0)).
Percentiles = Seq[Pair[Annotated[int, Field(ge=0, le=100)], Positive]]


class ToolResult(Record):
    """The base of every tool's parsed report: what stats, tables and claims read from any of them."""

    percentiles_ms: Percentiles

    if TYPE_CHECKING:  # each tool's record has these as fields or properties

        @property
        def tool(self) -> str: ...
        @property
        def requests_per_s(self) -> float: ...
        @property
        def complete_requests(self) -> int: ...
        @property
        def failed_requests(self) -> int: ...
        @property
        def non_2xx_responses(self) -> int: ...
        @property
        def time_per_request_ms(self) -> float: ...
        @property
        def keepalive_honoured(self) -> bool | None: ...
        @property
        def measured_s(self) -> float: ...

    @model_validator(mode="after")
    def _percentiles_rise(self) -> ToolResult:
        rising_percentiles(self.percentiles_ms, "ms")
        return self

    def response_time_ms(self, percent: int) -> float | None:
        """The time within which `percent` % of the requests were served under the tool's closed loop (a connection
        sends its next request once the last is answered), None where not reported; the open-loop tool's latency,
        counted from when each request was due, is `PacedResult.latency_at_us`."""
        return dict(self.percentiles_ms).get(percent)

    @property
    def outside_measurement_s(self) -> float:
        """The seconds this tool's process spends outside the time it measured, beyond starting and ending a
        native program (an interpreter's imports, a helper started first): 0 for ab, wrk and h2load."""
        return 0.0


def rising_percentiles(pairs: Sequence[tuple[float, float]], unit: str) -> None:
    """A ValueError unless each percentile is listed once, from the lowest up, none below a lower one."""
    ranks = [rank for rank, _ in pairs]
    if ranks != sorted(set(ranks)):
        raise ValueError(f"percentiles {ranks} are not listed once each, from the lowest up")
    for (low, below), (high, above) in pairwise(pairs):
        if above < below:
            raise ValueError(f"its p{high:g} ({above:,} {unit}) is below its p{low:g} ({below:,} {unit})")


ResultT = TypeVar("ResultT", bound=ToolResult)
R = TypeVar("R", bound=Record)


def build_report(record: type[R], values: dict[str, Any], error: type[BenchError], tool: str) -> R:
    """A result record from parsed values; a value out of range is the tool's parse error, not a traceback."""
    try:
        return record.model_validate(values)
    except ValidationError as problem:
        first = problem.errors()[0]
        where = ".".join(str(step) for step in first["loc"])
        raise error(f"{tool} output has an impossible {where} ({first['input']!r}: {first['msg'].lower()})") from None


# Where a repetition's interference (others' busy CPU time) was counted: nanoseconds, or clock ticks.
BusyClock = Literal["cpuacct", "ticks"]


class Repetition(Record, Generic[ResultT]):
    """One measured run of one cell: the exact argv, the CPU it cost, the raw output parsed."""

    index: int = Field(ge=1)
    argv: Seq[str] = Field(min_length=1)
    exit_code: int
    timed_out: bool
    raw_output: InnerPath  # relative to the run directory
    wall_s: Positive
    load_cpu_s: Positive  # the load tool's CPU (for a client under test: the client process's)
    server_cpu_s: Positive
    # Where server_cpu_s comes from: the scheduler's per-thread nanoseconds, or clock ticks (10 ms steps:
    # every run before format version 4, and a repetition in which a server's thread exited)
    server_cpu_clock: Literal["schedstat", "ticks"]
    # The kernel's part of the server's CPU, from clock ticks (10 ms steps: sum it over a cell's repetitions);
    # None in runs made before format version 6.
    server_system_s: Positive | None
    backend_cpu_s: dict[str, Positive]  # CPU of each backend over this repetition
    result: ResultT | None
    error: str | None
    # Where the repetition stood in the run and what else the machine did meanwhile (None: not recorded).
    started_after_s: Positive | None  # seconds after the run started
    steal_s: Positive | None  # CPU time the hypervisor gave to others, on the measured CPUs
    other_busy_s: Positive | None  # busy CPU time on the measured CPUs not spent by this run's processes
    # Its clock: "cpuacct" where the machine's busy time and every process's own were counted in nanoseconds,
    # "ticks" where any of them came in 10 ms clock ticks (every run before format version 10); None with
    # other_busy_s.
    other_busy_clock: BusyClock | None
    # Others took more CPU time on the measured CPUs than the run's settings allow (settings.disturbed): its
    # figures are kept and shown, but intervals and claims leave it out and its round is measured again.
    disturbed: bool
    # The server's process tree at its highest memory during the repetition (None: made before format 14, or
    # a client under test, whose server is the recipe's backend).
    server_memory: MemoryPeak | None
    # The file of every reading that peak summarizes (None: not kept, as before format 16, or no reading).
    memory_output: InnerPath | None

    @property
    def ok(self) -> bool:
        return self.result is not None and self.error is None

    @property
    def counted(self) -> bool:
        """Whether its figures count: it worked and was not disturbed."""
        return self.ok and not self.disturbed

    @property
    def interference_s(self) -> float | None:
        """The CPU time others took on the measured CPUs meanwhile (busy and steal); None: not recorded."""
        if self.other_busy_s is None:
            return None
        return self.other_busy_s + (self.steal_s or 0.0)

    def per_request_us(self, cpu_s: float) -> float | None:
        """CPU seconds spread over this repetition's completed requests, in µs (None without any)."""
        if self.result is None or self.result.complete_requests <= 0:
            return None
        return cpu_s * 1e6 / self.result.complete_requests


@dataclass(frozen=True)
class LoadTool:
    """What a load tool is, for the harness and the pages (one per tool module, listed in the registry)."""

    name: str  # the `tool` key of cells, cell runs and results
    program: str | None  # the program run by default (settings.tool_paths overrides); None: the subject itself
    version_flag: str | None  # how the program prints its version
    parse: Callable[[str], ToolResult]
    cpu: str  # what its measured CPU is
    # Whether a figure near the ceiling subject's (a C server on a static file) means this tool, not the
    # server under test, was the limit: true of single-threaded ab; with wrk or h2load the C server is.
    tool_limited_at_ceiling: bool
    connections: str  # how it uses connections, for captions


class CellBase(Record):
    """What every cell declares: its tool, name and label, and an optional path."""

    TOOL: ClassVar[LoadTool]
    RUN: ClassVar[type[CellRunBase[Any]]]  # the record of a subject's repetitions in such a cell
    # Whether its load comes at a server subject whose memory the harness reads (a client under test's comes at
    # the recipe's backend), and whether that memory may be read during a repetition, not only at its ends.
    loads_a_server: ClassVar[bool] = True
    memory_read_during: ClassVar[bool] = True

    name: Name
    label: Line

    def shortened_to(self, duration_s: int) -> Self:
        """The cell run for `duration_s` seconds where a profile asks it of a cell bounded by time (wrk); else as
        it is."""
        return self

    def run_record(self, requests: int, repetitions: Sequence[Repetition[Any]]) -> CellRunBase[Any]:
        """The stored record of a subject's repetitions in this cell: every field the record shares with the
        cell copied from it, the request count where the record has one, and the repetitions."""
        fields = self.RUN.model_fields
        shared = {name: getattr(self, name) for name in type(self).model_fields if name in fields}
        if "requests" in fields:
            shared["requests"] = requests
        return self.RUN.model_validate({**shared, "repetitions": stored(repetitions)})


class CellRunBase(Record, Generic[ResultT]):
    """Every repetition of one subject in one cell, with the cell's parameters."""

    TOOL: ClassVar[LoadTool]

    name: Name
    label: Line
    repetitions: Seq[Repetition[ResultT]] = Field(min_length=1)

    if TYPE_CHECKING:

        @property
        def keepalive(self) -> bool: ...
        @property
        def concurrency(self) -> int: ...
        @property
        def requests(self) -> int | None: ...

    @property
    def amount(self) -> str:
        """What bounds one repetition, as the tool's command line says it ("-n 1000", "-d 3 s")."""
        return f"-n {self.requests}"

    @property
    def request_ceiling(self) -> int | None:
        """The most requests one repetition may make (its -n); None where only time bounds it."""
        return None


def stored(repetitions: Sequence[Repetition[Any]]) -> Any:
    """Repetitions as a cell run's record takes them: plain data, validated again as that tool's results."""
    return [rep.model_dump() for rep in repetitions]


class ExternalCell(CellBase):
    """A cell whose load a program of its own makes (ab, wrk, h2load) against a server subject."""

    path: UrlPath | Literal[""] = ""  # empty: the subject's own path

    # Whether one repetition is bounded by the profile's request count (-n), so it can serve as a warm-up.
    counted: ClassVar[bool] = True

    def argv(self, url: str, requests: int, program: str, socket_timeout_s: int) -> list[str]:
        """The bounded command line of one repetition."""
        raise NotImplementedError

    def time_bounded(self, argv: list[str], seconds: float) -> list[str]:
        """The command also ended after `seconds` where the tool needs telling (wrk and the paced tool run for a
        set time anyway)."""
        return argv
