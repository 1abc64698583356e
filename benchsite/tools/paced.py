"""benchsite-paced (this project's open-loop load tool, `tools/paced_client.py`): its cell, parsed report and
stored cell run.

Requests leave on a fixed schedule at the offered rate, whether or not earlier ones were answered, and each
latency counts from the moment its request was due: a stall is charged to every request it held up, as a
stream of independent users would feel it (ab's and wrk's closed loops charge it to one request per client).
Each regular expression quotes the report line it reads.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from benchsite.errors import BenchError
from benchsite.records import Pair, Seq
from benchsite.tools.base import (
    CellRunBase,
    Count,
    ExternalCell,
    LoadTool,
    Positive,
    Rate,
    ToolResult,
    build_report,
    rising_percentiles,
)

# A repetition whose tool sent its requests later than this (99th percentile of its send lag: from each
# request's due time in version 2, a wait for one of its own connections included; version 1 counted from when a
# connection was free), did not hold the offered rate: its figures are the tool's, and decide nothing. So too
# one whose tool used CPU_LIMIT of a CPU or more (version 2 on: it has no time left to read replies when they come,
# whatever its sends did; its CPU counts the kernel's loopback work for the server's side too), or
# kept busier than BUSY_LIMIT of the time sending and reading (version 1), or that sent fewer than it scheduled.
LAG_LIMIT_US = 1000
# From version 5 (the witness's 2) the report says the tool's own lag apart: from when each request could first have
# gone (its due time, or when one of the tool's connections came free for it), so a wait for the server is not the
# tool's. A load is the tool's where that lag's p99 exceeds LAG_LIMIT_US and LAG_SHARE of the p99 it reports: a lag
# that is a small share of the tail cannot move it (on a shared machine the fixed 1 ms flagged 27 of 28 loads an
# independent probe found on time).
LAG_SHARE = 0.1
CPU_LIMIT = 0.95
BUSY_LIMIT = 0.75
# Before version 4, the report did not say how long the tool's process ran outside its schedule. It is a Python
# program: its schedule starts once its interpreter has imported what it needs and its witness is ready (0.24 to
# 0.44 s in the 360 repetitions of the committed runs, 2026-11-27; 1.17 s once in a test run on a busy machine).
OUTSIDE_BEFORE_VERSION_4_S = 1.0
WITNESS_PREFIX = "witness "


class PacedParseError(BenchError):
    """benchsite-paced printed something that is not a complete report."""


class PacedResult(ToolResult):
    """What one benchsite-paced report says, with units in the field names."""

    tool: Literal["paced"] = "paced"
    offered_rps: Rate
    schedule_s: Positive
    connections: int = Field(ge=1)
    kept_alive: bool
    scheduled: Count
    completed: Count
    connect_errors: Count
    read_errors: Count
    timeouts: Count
    non_2xx: Count
    elapsed_s: Positive
    requests_per_s: Rate  # achieved: completed ÷ elapsed
    busy_share: float | None = Field(default=None, ge=0, le=1.5)  # version 1: of the elapsed time, sending and reading
    send_lag_us_p50: Count
    send_lag_us_p99: Count
    send_lag_us_max: Count
    latency_us_mean: Positive | None  # None: nothing was answered
    latency_us: Seq[Pair[float, Count]]  # (percentile, µs from the request's due time)
    # Version 2 and the witness (None before):
    sent: Count | None = None  # requests put in flight, on time or late
    cpu_share: float | None = Field(default=None, ge=0, le=1.5)  # the tool's CPU time (user and system) ÷ elapsed
    peak_open: Count | None = None  # the most connections open at once
    listen_overflows: Count | None = None  # the machine's TcpExt ListenOverflows, over the run
    scheduling: str | None = None  # "ordinary on CPU 1", "real-time on CPU 0"
    witness: PacedResult | None = None  # the witness's report, where one ran beside it
    witness_error: str | None = None  # why a witness that was asked for gave no report
    # Version 4 (None before): the tool's process outside its schedule, before (from the process's start) and after
    before_schedule_s: float | None = Field(default=None, ge=0)
    after_schedule_s: float | None = Field(default=None, ge=0)
    # Version 5 (the witness's 2; None before): its own lag, from when each request could first have gone
    own_lag_us_p99: Count | None = None
    own_lag_us_max: Count | None = None

    @model_validator(mode="after")
    def _latency_rises(self) -> PacedResult:
        rising_percentiles(self.latency_us, "us")
        return self

    @property
    def complete_requests(self) -> int:
        return self.completed

    @property
    def failed_requests(self) -> int:
        return self.connect_errors + self.read_errors + self.timeouts

    @property
    def non_2xx_responses(self) -> int:
        return self.non_2xx

    @property
    def time_per_request_ms(self) -> float:
        return (self.latency_us_mean or 0.0) / 1000

    @property
    def measured_s(self) -> float:
        return self.elapsed_s

    @property
    def keepalive_honoured(self) -> bool | None:
        return None  # not reported

    @property
    def outside_measurement_s(self) -> float:
        if self.before_schedule_s is None or self.after_schedule_s is None:
            return OUTSIDE_BEFORE_VERSION_4_S
        return self.before_schedule_s + self.after_schedule_s

    @property
    def tool_limited(self) -> bool:
        """Whether the tool itself fell behind its schedule (so it, not the server, set the figures): its own lag
        over LAG_LIMIT_US and LAG_SHARE of its p99, or its CPU at CPU_LIMIT (before version 5: its send lag over
        LAG_LIMIT_US or a scheduled request never sent; version 1: its busy share at BUSY_LIMIT)."""
        if self.own_lag_us_p99 is not None:
            limit = max(LAG_LIMIT_US, LAG_SHARE * (self.latency_at_us(99.0) or 0))
            return self.own_lag_us_p99 > limit or (self.cpu_share or 0.0) >= CPU_LIMIT
        if self.send_lag_us_p99 > LAG_LIMIT_US:
            return True
        if self.busy_share is not None:
            return self.busy_share >= BUSY_LIMIT
        return (self.cpu_share or 0.0) >= CPU_LIMIT or self.sent != self.scheduled

    def latency_at_us(self, percentile: float) -> int | None:
        """The latency within which `percentile` % of the answered requests came (None: not reported)."""
        return dict(self.latency_us).get(percentile)

    def at_least_us(self, percentile: float) -> int | None:
        """Where the tool fell behind (version 5 on): what the server surely took at that percentile, its figure less
        the tool's largest own lag (every request's latency less its own lag is the server's and the wait for it);
        None where that leaves nothing or the report cannot tell."""
        at = self.latency_at_us(percentile)
        if at is None or self.own_lag_us_max is None:
            return None
        bound = at - self.own_lag_us_max
        return bound if bound > 0 else None


_NUMBER = r"(\d+(?:\.\d+)?)"
# benchsite-paced 2 (or benchsite-witness 1)
_VERSION = re.compile(r"\Abenchsite-(paced|witness) (\d+)$", re.M)
# offered: 500.000 req/s for 4.000 s, at most 10 connections, kept alive (version 1: "10 connections")
_OFFERED = re.compile(
    rf"^offered: {_NUMBER} req/s for {_NUMBER} s, (?:at most )?(\d+) connections, (kept alive|one per request)$",
    re.M,
)
# cpu: 0.634 of the elapsed time
_CPU = re.compile(rf"^cpu: {_NUMBER} of the elapsed time$", re.M)
# peak open: 12 connections
_PEAK = re.compile(r"^peak open: (\d+) connections$", re.M)
# listen overflows: 0 (this machine's, over the run)
_OVERFLOWS = re.compile(r"^listen overflows: (\d+|unknown) \(this machine's, over the run\)$", re.M)
# scheduling: real-time on CPU 0
_SCHEDULING = re.compile(r"^scheduling: ((?:real-time|ordinary) on CPUs? [\d-]+)$", re.M)
# outside schedule: before 0.412 s, after 0.031 s (version 4)
_OUTSIDE = re.compile(rf"^outside schedule: before {_NUMBER} s, after {_NUMBER} s$", re.M)
# errors: 0 connect, 0 read, 0 timeout
_ERRORS = re.compile(r"^errors: (\d+) connect, (\d+) read, (\d+) timeout$", re.M)
# send lag us: p50 0 p99 1 max 18
_LAG = re.compile(r"^send lag us: p50 (\d+) p99 (\d+) max (\d+)$", re.M)
# own lag us: p50 0 p99 1 max 18 (version 5, the witness's 2)
_OWN_LAG = re.compile(r"^own lag us: p50 (\d+) p99 (\d+) max (\d+)$", re.M)
# latency us: min 180 mean 126765.3 max 1086409
_LATENCY = re.compile(rf"^latency us: min (\d+) mean {_NUMBER} max (\d+)$", re.M)
# percentile us: 99.9 1084280
_PERCENTILE = re.compile(rf"percentile us: {_NUMBER} (\d+)")
# busy: 0.231 of the elapsed time
_BUSY = re.compile(rf"^busy: {_NUMBER} of the elapsed time$", re.M)
# bucket us: 251 1800
_BUCKET = re.compile(r"bucket us: (\d+) (\d+)")


def _line(name: str, report: str) -> str:
    match = re.search(rf"^{name}: (\S+)(?: req/s| s)?$", report, re.M)
    if not match:
        raise PacedParseError(f"benchsite-paced output has no '{name}:' line: not a complete report")
    return match.group(1)


def _need(pattern: re.Pattern[str], report: str, what: str) -> re.Match[str]:
    match = pattern.search(report)
    if not match:
        raise PacedParseError(f"benchsite-paced output has no {what}: not a complete report")
    return match


def _strict_lines(report: str, prefix: str, pattern: re.Pattern[str]) -> list[tuple[str, ...]]:
    """Every line that starts with `prefix`, each of which must read as `pattern` says (a line of "-5" or "nan"
    refuses the report rather than being skipped)."""
    found = []
    for line in report.splitlines():
        if line.startswith(prefix):
            match = pattern.fullmatch(line)
            if match is None:
                raise PacedParseError(f"benchsite-paced output has a malformed line {line!r}: not a report it printed")
            found.append(match.groups())
    return found


def _percentiles_fit(percentiles: tuple[tuple[float, int], ...], latency: re.Match[str] | None) -> None:
    """Percentiles that rise with their rank, each between the reported min and max, the 100th the max."""
    try:
        rising_percentiles(percentiles, "us")
    except ValueError as error:
        raise PacedParseError(f"benchsite-paced output is impossible: {error}") from None
    if latency is None:
        if percentiles:
            raise PacedParseError("benchsite-paced output lists percentiles but no 'latency us:' line")
        return
    low, high = int(latency.group(1)), int(latency.group(3))
    outside = [(rank, us) for rank, us in percentiles if not low <= us <= high or (rank == 100 and us != high)]
    if low > high or outside:
        rank, us = outside[0] if outside else (0, low)
        raise PacedParseError(
            f"benchsite-paced output is impossible: its p{rank:g} ({us} us) is not between its min ({low} us) "
            f"and max ({high} us)"
        )


def _optional(pattern: re.Pattern[str], report: str, version: int, what: str) -> str | None:
    """A line version 2 always prints (None in a version 1 report)."""
    if version < 2:
        return None
    return _need(pattern, report, what).group(1)


def parse_paced_output(text: str) -> PacedResult:
    """Parse one benchsite-paced report (with its witness's, where one ran); raise PacedParseError naming the first
    missing or inconsistent part."""
    lines = text.splitlines(keepends=True)
    report = "".join(line for line in lines if not line.startswith(WITNESS_PREFIX))
    witnessed = "".join(line[len(WITNESS_PREFIX) :] for line in lines if line.startswith(WITNESS_PREFIX))
    name, number = _need(_VERSION, report, "version line").groups()
    own_lag = (name == "paced" and int(number) >= 5) or (name == "witness" and int(number) >= 2)
    version = 2 if name == "witness" else int(number)  # the witness prints version 2's report
    witness, witness_error = None, None
    if witnessed.startswith("failed: "):
        witness_error = witnessed.removeprefix("failed: ").strip()
    elif witnessed:
        witness = parse_paced_output(witnessed)
    offered = _need(_OFFERED, report, "'offered:' line")
    errors = [int(group) for group in _need(_ERRORS, report, "'errors:' line").groups()]
    lag = [int(group) for group in _need(_LAG, report, "'send lag us:' line").groups()]
    own = [int(group) for group in _need(_OWN_LAG, report, "'own lag us:' line").groups()] if own_lag else None
    busy = float(_need(_BUSY, report, "'busy:' line").group(1)) if version < 2 else None
    sent = _optional(re.compile(r"^sent: (\d+)$", re.M), report, version, "'sent:' line")
    cpu = _optional(_CPU, report, version, "'cpu:' line")
    peak = _optional(_PEAK, report, version, "'peak open:' line")
    overflows = _optional(_OVERFLOWS, report, version, "'listen overflows:' line")
    scheduling = _optional(_SCHEDULING, report, version, "'scheduling:' line")
    outside = _need(_OUTSIDE, report, "'outside schedule:' line") if version >= 4 else None
    completed = int(_line("completed", report))
    latency = _LATENCY.search(report)
    if completed and latency is None:
        raise PacedParseError("benchsite-paced output has no 'latency us:' line though requests were answered")
    percentiles = tuple((float(p), int(us)) for p, us in _strict_lines(report, "percentile us:", _PERCENTILE))
    _percentiles_fit(percentiles, latency)
    counted = sum(int(count) for _, count in _strict_lines(report, "bucket us:", _BUCKET))
    if counted != completed:
        raise PacedParseError(
            f"benchsite-paced output disagrees with itself: its histogram holds {counted} requests, "
            f"'completed:' says {completed}"
        )
    values: dict[str, Any] = dict(
        offered_rps=float(offered.group(1)),
        schedule_s=float(offered.group(2)),
        connections=int(offered.group(3)),
        kept_alive=offered.group(4) == "kept alive",
        scheduled=int(_line("scheduled", report)),
        completed=completed,
        connect_errors=errors[0],
        read_errors=errors[1],
        timeouts=errors[2],
        non_2xx=int(_line("non-2xx", report)),
        elapsed_s=float(_line("elapsed", report)),
        requests_per_s=float(_line("achieved", report)),
        busy_share=busy,
        send_lag_us_p50=lag[0],
        send_lag_us_p99=lag[1],
        send_lag_us_max=lag[2],
        latency_us_mean=float(latency.group(2)) if latency else None,
        latency_us=percentiles,
        percentiles_ms=tuple((int(p), us / 1000) for p, us in percentiles if p == int(p)),
        sent=None if sent is None else int(sent),
        cpu_share=None if cpu is None else float(cpu),
        peak_open=None if peak is None else int(peak),
        listen_overflows=None if overflows in (None, "unknown") else int(overflows),
        scheduling=scheduling,
        witness=witness,
        witness_error=witness_error,
        before_schedule_s=float(outside.group(1)) if outside else None,
        after_schedule_s=float(outside.group(2)) if outside else None,
        own_lag_us_p99=own[1] if own else None,
        own_lag_us_max=own[2] if own else None,
    )
    return build_report(PacedResult, values, PacedParseError, "benchsite-paced")


TOOL = LoadTool(
    name="paced",
    program=str(Path(sys.executable).with_name("benchsite-paced")),  # the project's script, beside its Python
    version_flag="--version",
    parse=parse_paced_output,
    cpu="benchsite-paced's own CPU time",
    tool_limited_at_ceiling=False,  # it says itself when it fell behind (its send lag)
    connections="open loop: requests on a fixed schedule, over kept-alive connections or one each",
)


class PacedCell(ExternalCell):
    """An open-loop cell: `rate` requests a second for `seconds`, over `connections` kept-alive connections
    (or at most that many open, one per request)."""

    TOOL: ClassVar[LoadTool] = TOOL
    counted: ClassVar[bool] = False  # bounded by its schedule, not by the profile's request count
    # It keeps its schedule to the microsecond: the server's memory is read before and after it, not during.
    memory_read_during: ClassVar[bool] = False

    tool: Literal["paced"] = "paced"
    rate: float = Field(gt=0, le=1e6)
    seconds: float = Field(gt=0, le=3600)
    connections: int = Field(ge=1, le=20000)
    keepalive: bool = False

    @property
    def concurrency(self) -> int:
        return self.connections

    def argv(self, url: str, requests: int, program: str, socket_timeout_s: int) -> list[str]:
        """Bounded by its schedule and, per request, by the socket timeout."""
        return [
            program,
            "--rate",
            f"{self.rate:.3f}",
            "--duration",
            f"{self.seconds:g}",
            "--connections",
            str(self.connections),
            *(["--keepalive"] if self.keepalive else []),
            "--timeout",
            str(socket_timeout_s),
            url,
        ]


class PacedCellRun(CellRunBase[PacedResult]):
    """benchsite-paced --rate R --duration S --connections C."""

    TOOL: ClassVar[LoadTool] = TOOL

    tool: Literal["paced"] = "paced"
    rate: float = Field(gt=0)
    seconds: float = Field(gt=0)
    connections: int = Field(ge=1)
    keepalive: bool

    @property
    def concurrency(self) -> int:
        return self.connections

    @property
    def requests(self) -> int | None:
        return None

    @property
    def amount(self) -> str:
        return f"{self.rate:,.0f} req/s for {self.seconds:g} s"


PacedCell.RUN = PacedCellRun  # the record a subject's repetitions in such a cell are kept in
