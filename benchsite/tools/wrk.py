"""wrk: its cell, its argv, its parsed report (run with --latency) and its stored cell run.

wrk keeps every connection alive, so its figures compare with `ab -k`, not plain ab.
Each regular expression quotes the report line it reads.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any, ClassVar, Literal, Self

from pydantic import Field, model_validator

from benchsite.errors import BenchError
from benchsite.tools.agreement import Printed, check_quotient
from benchsite.tools.base import (
    CellRunBase,
    Count,
    ExternalCell,
    LoadTool,
    Percentiles,
    Positive,
    Rate,
    ToolResult,
    build_report,
)


class WrkParseError(BenchError):
    """wrk printed something that is not a complete report."""


_TIME_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}
_SIZE_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


def _ms(value: str, unit: str) -> float:
    return float(value) * _TIME_UNITS_MS[unit]


class WrkResult(ToolResult):
    """What one wrk report says, with units in the field names."""

    tool: Literal["wrk"] = "wrk"
    threads: Count
    connections: Count
    duration_s: Positive
    complete_requests: Count
    bytes_read: Count
    requests_per_s: Rate
    transfer_bytes_per_s: Positive
    latency_ms_mean: Positive
    latency_ms_stdev: Positive
    latency_ms_max: Positive
    percentiles_ms: Percentiles
    socket_errors_connect: Count
    socket_errors_read: Count
    socket_errors_write: Count
    socket_errors_timeout: Count
    non_2xx_responses: Count

    @property
    def failed_requests(self) -> int:
        """Socket errors of any kind, the nearest thing wrk has to ab's failed requests."""
        return (
            self.socket_errors_connect + self.socket_errors_read + self.socket_errors_write + self.socket_errors_timeout
        )

    @property
    def time_per_request_ms(self) -> float:
        return self.latency_ms_mean

    @property
    def measured_s(self) -> float:
        """How long the tool says it measured: the duration wrk ran for."""
        return self.duration_s

    @property
    def keepalive_honoured(self) -> bool | None:
        return None  # wrk does not report it


# Running 2s test @ http://127.0.0.1:8099/
_DURATION = re.compile(r"^Running (\d+(?:\.\d+)?)(s|m|h) test @ ", re.M)
#   1 threads and 10 connections
_THREADS = re.compile(r"^\s*(\d+) threads and (\d+) connections", re.M)
#     Latency     4.21ms    2.65ms  18.84ms   70.46%
_LATENCY = re.compile(
    r"^\s*Latency\s+(\d+(?:\.\d+)?)(us|ms|s|m)\s+(\d+(?:\.\d+)?)(us|ms|s|m)\s+(\d+(?:\.\d+)?)(us|ms|s|m)", re.M
)
#      50%    3.69ms
_PERCENTILE = re.compile(r"^\s*(50|75|90|99)%\s+(\d+(?:\.\d+)?)(us|ms|s|m)\s*$", re.M)
#   3561 requests in 2.01s, 441.89KB read
_TOTALS = re.compile(r"^\s*(\d+) requests in (\d+(?:\.\d+)?)(us|ms|s|m), (\d+(?:\.\d+)?)(B|KB|MB|GB|TB) read", re.M)
#   Socket errors: connect 0, read 12, write 0, timeout 3
_SOCKET_ERRORS = re.compile(r"^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", re.M)
#   Non-2xx or 3xx responses: 5
_NON_2XX = re.compile(r"^\s*Non-2xx or 3xx responses: (\d+)", re.M)
# Requests/sec:   1770.08
_RPS = re.compile(r"^Requests/sec:\s+(\d+(?:\.\d+)?)\s*$", re.M)
# Transfer/sec:    219.65KB
_TRANSFER = re.compile(r"^Transfer/sec:\s+(\d+(?:\.\d+)?)(B|KB|MB|GB|TB)", re.M)


def _need(pattern: re.Pattern[str], report: str, what: str) -> re.Match[str]:
    match = pattern.search(report)
    if not match:
        raise WrkParseError(f"wrk output has no {what}: not a complete wrk --latency report")
    return match


def _check_agreement(totals: re.Match[str], rps: re.Match[str], transfer: re.Match[str]) -> None:
    """Requests/sec and Transfer/sec against the requests, bytes and time of the totals line (wrk divides
    both by the run's time)."""
    check = partial(check_quotient, "wrk", WrkParseError)
    runtime_s = Printed.of(totals.group(2), _TIME_UNITS_MS[totals.group(3)] / 1000)
    requests = Printed(int(totals.group(1)))
    check(
        said="Requests/sec",
        printed=Printed.of(rps.group(1)),
        numerator=requests,
        denominator=runtime_s,
        how="the requests ÷ their time",
    )
    read = Printed.of(totals.group(4), _SIZE_UNITS[totals.group(5)])
    per_s = Printed.of(transfer.group(1), _SIZE_UNITS[transfer.group(2)])
    check(said="Transfer/sec", printed=per_s, numerator=read, denominator=runtime_s, how="the bytes read ÷ their time")


def parse_wrk_output(report: str) -> WrkResult:
    """Parse one `wrk --latency` report; raise WrkParseError naming the first missing part."""
    duration = _need(_DURATION, report, "'Running ... test' line")
    threads = _need(_THREADS, report, "'threads and connections' line")
    latency = _need(_LATENCY, report, "'Latency' line")
    totals = _need(_TOTALS, report, "'requests in' line")
    rps = _need(_RPS, report, "'Requests/sec' line")
    transfer = _need(_TRANSFER, report, "'Transfer/sec' line")
    percentiles = tuple((int(p), _ms(v, u)) for p, v, u in _PERCENTILE.findall(report))
    if [p for p, _ in percentiles] != [50, 75, 90, 99]:
        if "HdrHistogram" in report:
            raise WrkParseError(
                "this is wrk2's report (an HdrHistogram latency distribution): this harness reads "
                "wrk 4's; set wrk_path to wrk 4"
            )
        raise WrkParseError("wrk output has no complete 'Latency Distribution': run wrk with --latency")
    _check_agreement(totals, rps, transfer)
    errors = _SOCKET_ERRORS.search(report)
    non_2xx = _NON_2XX.search(report)
    values = dict(
        threads=int(threads.group(1)),
        connections=int(threads.group(2)),
        duration_s=float(duration.group(1)) * {"s": 1, "m": 60, "h": 3600}[duration.group(2)],
        complete_requests=int(totals.group(1)),
        bytes_read=round(float(totals.group(4)) * _SIZE_UNITS[totals.group(5)]),
        requests_per_s=float(rps.group(1)),
        transfer_bytes_per_s=float(transfer.group(1)) * _SIZE_UNITS[transfer.group(2)],
        latency_ms_mean=_ms(latency.group(1), latency.group(2)),
        latency_ms_stdev=_ms(latency.group(3), latency.group(4)),
        latency_ms_max=_ms(latency.group(5), latency.group(6)),
        percentiles_ms=percentiles,
        socket_errors_connect=int(errors.group(1)) if errors else 0,
        socket_errors_read=int(errors.group(2)) if errors else 0,
        socket_errors_write=int(errors.group(3)) if errors else 0,
        socket_errors_timeout=int(errors.group(4)) if errors else 0,
        non_2xx_responses=int(non_2xx.group(1)) if non_2xx else 0,
    )
    return build_report(WrkResult, values, WrkParseError, "wrk")


def build_argv(
    *, url: str, connections: int, threads: int, duration_s: int, timeout_s: int, wrk_path: str = "wrk"
) -> list[str]:
    """The wrk command line for one cell: bounded by -d and --timeout."""
    return [
        wrk_path,
        "--latency",
        "-t",
        str(threads),
        "-c",
        str(connections),
        "-d",
        f"{duration_s}s",
        "--timeout",
        f"{timeout_s}s",
        url,
    ]


TOOL = LoadTool(
    name="wrk",
    program="wrk",
    version_flag="--version",
    parse=parse_wrk_output,
    cpu="wrk's own CPU time",
    tool_limited_at_ceiling=False,  # against the C server on a static file, the server is the limit wrk finds
    connections="HTTP/1.1 keep-alive",
)


class WrkCell(ExternalCell):
    """A wrk cell: -c connections for -d seconds, always keep-alive."""

    TOOL: ClassVar[LoadTool] = TOOL
    keepalive: ClassVar[bool] = True
    counted: ClassVar[bool] = False  # bounded by time, not by a request count

    tool: Literal["wrk"] = "wrk"
    connections: int = Field(ge=1, le=20000)
    duration_s: int = Field(ge=1, le=3600)
    threads: int = Field(default=1, ge=1, le=64)

    @property
    def concurrency(self) -> int:
        return self.connections

    def shortened_to(self, duration_s: int) -> Self:
        return self.model_copy(update={"duration_s": duration_s})

    @model_validator(mode="before")
    @classmethod
    def _default_names(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("connections"), int):
            c = data["connections"]
            data = {"name": f"wrk-c{c}", "label": f"wrk -c {c}", **data}
        return data

    def argv(self, url: str, requests: int, program: str, socket_timeout_s: int) -> list[str]:
        """Bounded by -d and --timeout (the request count does not apply)."""
        return build_argv(
            url=url,
            connections=self.connections,
            threads=self.threads,
            duration_s=self.duration_s,
            timeout_s=socket_timeout_s,
            wrk_path=program,
        )


class WrkCellRun(CellRunBase[WrkResult]):
    """wrk -c connections -d duration (always keep-alive)."""

    TOOL: ClassVar[LoadTool] = TOOL
    keepalive: ClassVar[bool] = True
    requests: ClassVar[None] = None

    tool: Literal["wrk"] = "wrk"
    connections: int = Field(ge=1)
    duration_s: int = Field(ge=1)

    @property
    def concurrency(self) -> int:
        return self.connections

    @property
    def amount(self) -> str:
        return f"-d {self.duration_s} s"


WrkCell.RUN = WrkCellRun  # the record a subject's repetitions in such a cell are kept in
