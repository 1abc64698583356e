"""h2load (nghttp2's load tool): its cell, parsed report and stored cell run.

h2load is multi-threaded and keeps connections alive; run with --h1 it speaks HTTP/1.1, so its
figures compare with wrk's and `ab -k`'s, not plain ab's. Against the ceiling subject (nginx on a
static file) it shows whether ab's own ceiling hides differences between servers. Each regular
expression quotes the report line it reads.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from benchsite.errors import BenchError
from benchsite.tools.agreement import Printed, check_quotient
from benchsite.tools.base import (
    CellRunBase,
    Count,
    ExternalCell,
    LoadTool,
    Positive,
    Rate,
    ToolResult,
    build_report,
)


class H2loadParseError(BenchError):
    """h2load printed something that is not a complete report."""


_TIME_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}
_SIZE_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}
_TIME = r"(\d+(?:\.\d+)?)(us|ms|s)"


class H2loadResult(ToolResult):
    """What one h2load report says, with units in the field names."""

    tool: Literal["h2load"] = "h2load"
    application_protocol: str | None  # None: no connection got as far as choosing one
    duration_s: Positive
    requests_per_s: Rate
    transfer_bytes_per_s: Positive
    requests_total: Count
    requests_started: Count
    requests_done: Count
    requests_succeeded: Count
    requests_failed: Count
    requests_errored: Count
    requests_timeout: Count
    status_2xx: Count
    status_3xx: Count
    status_4xx: Count
    status_5xx: Count
    traffic_total_bytes: Count
    traffic_headers_bytes: Count
    traffic_data_bytes: Count
    request_ms_min: Positive
    request_ms_max: Positive
    request_ms_mean: Positive
    request_ms_sd: Positive
    connect_ms_mean: Positive
    first_byte_ms_mean: Positive

    @property
    def complete_requests(self) -> int:
        return self.requests_done

    @property
    def failed_requests(self) -> int:
        """Requests that got no answer (errors and timeouts); answers other than 2xx are counted apart."""
        return self.requests_errored + self.requests_timeout

    @property
    def non_2xx_responses(self) -> int:
        return self.status_3xx + self.status_4xx + self.status_5xx

    @property
    def time_per_request_ms(self) -> float:
        return self.request_ms_mean

    @property
    def measured_s(self) -> float:
        """How long the tool says it measured: h2load's finished-in time."""
        return self.duration_s

    @property
    def keepalive_honoured(self) -> bool | None:
        return None  # h2load does not report it


# finished in 1.12s, 446.03 req/s, 23.82KB/s
_FINISHED = re.compile(r"^finished in " + _TIME + r", (\d+(?:\.\d+)?) req/s, (\d+(?:\.\d+)?)(B|KB|MB|GB)/s$", re.M)
# requests: 500 total, 500 started, 500 done, 500 succeeded, 0 failed, 0 errored, 0 timeout
_REQUESTS = re.compile(
    r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, "
    r"(\d+) timeout$",
    re.M,
)
# status codes: 500 2xx, 0 3xx, 0 4xx, 0 5xx
_STATUS = re.compile(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx$", re.M)
# traffic: 26.70KB (27342) total, 71.78KB (73500) headers (space savings 0.00%), 5.86KB (6000) data
_TRAFFIC = re.compile(r"^traffic: \S+ \((\d+)\) total, \S+ \((\d+)\) headers .*, \S+ \((\d+)\) data$", re.M)
# time for request:      133us     10.73ms      2.97ms      2.32ms    79.00%
_ROW = r"^{name}\s*:\s+" + r"\s+".join([_TIME] * 4) + r"\s+\d+(?:\.\d+)?%$"
# req/s           :      44.64      259.29      171.16      108.87    60.00%    (the report's last line)
_PER_CLIENT = re.compile(r"^req/s\s*:\s+" + r"\s+".join([r"\d+(?:\.\d+)?"] * 4) + r"\s+\d+(?:\.\d+)?%$", re.M)
# Application protocol: http/1.1
_PROTOCOL = re.compile(r"^Application protocol: (\S+)$", re.M)


def _ms(value: str, unit: str) -> float:
    return float(value) * _TIME_UNITS_MS[unit]


def _need(pattern: re.Pattern[str], report: str, what: str) -> re.Match[str]:
    match = pattern.search(report)
    if not match:
        raise H2loadParseError(f"h2load output has no {what}: not a complete h2load report")
    return match


def _row(name: str, report: str) -> tuple[float, float, float, float]:
    match = _need(re.compile(_ROW.format(name=re.escape(name)), re.M), report, f"'{name}' row")
    groups = match.groups()
    low, high, mean, sd = (_ms(groups[i], groups[i + 1]) for i in range(0, 8, 2))
    return low, high, mean, sd


def _check_agreement(finished: re.Match[str], requests: list[int]) -> None:
    """req/s against the requests done and the time of the "finished in" line (h2load divides the one by the
    other), and the requests' own tally."""
    duration_s = Printed.of(finished.group(1), _TIME_UNITS_MS[finished.group(2)] / 1000)
    rate = Printed.of(finished.group(3))
    check_quotient(
        tool="h2load",
        error=H2loadParseError,
        said="req/s",
        printed=rate,
        numerator=Printed(requests[2]),
        denominator=duration_s,
        how="done ÷ time",
    )
    total, started, done, succeeded, failed = requests[:5]
    if not total >= started >= done >= succeeded or succeeded + failed > total:
        raise H2loadParseError(
            f"h2load output disagrees with itself: its requests line ({total} total, {started} started, {done} done, "
            f"{succeeded} succeeded, {failed} failed) does not add up (total >= started >= done >= succeeded, "
            "succeeded + failed <= total)"
        )


def parse_h2load_output(report: str) -> H2loadResult:
    """Parse one h2load report; raise H2loadParseError naming the first missing part."""
    report = "\n".join(line.rstrip() for line in report.splitlines())
    finished = _need(_FINISHED, report, "'finished in' line")
    requests = [int(group) for group in _need(_REQUESTS, report, "'requests:' line").groups()]
    status = [int(group) for group in _need(_STATUS, report, "'status codes:' line").groups()]
    traffic = [int(group) for group in _need(_TRAFFIC, report, "'traffic:' line").groups()]
    request = _row("time for request", report)
    connect = _row("time for connect", report)
    first_byte = _row("time to 1st byte", report)
    _check_agreement(finished, requests)
    _need(_PER_CLIENT, report, "'req/s' row (the last line): the report is cut short")
    protocol = _PROTOCOL.search(report)
    values: dict[str, Any] = dict(
        application_protocol=protocol.group(1) if protocol else None,
        duration_s=_ms(finished.group(1), finished.group(2)) / 1000,
        requests_per_s=float(finished.group(3)),
        transfer_bytes_per_s=float(finished.group(4)) * _SIZE_UNITS[finished.group(5)],
        requests_total=requests[0],
        requests_started=requests[1],
        requests_done=requests[2],
        requests_succeeded=requests[3],
        requests_failed=requests[4],
        requests_errored=requests[5],
        requests_timeout=requests[6],
        status_2xx=status[0],
        status_3xx=status[1],
        status_4xx=status[2],
        status_5xx=status[3],
        traffic_total_bytes=traffic[0],
        traffic_headers_bytes=traffic[1],
        traffic_data_bytes=traffic[2],
        request_ms_min=request[0],
        request_ms_max=request[1],
        request_ms_mean=request[2],
        request_ms_sd=request[3],
        connect_ms_mean=connect[2],
        first_byte_ms_mean=first_byte[2],
        percentiles_ms=(),  # h2load prints no latency percentiles
    )
    return build_report(H2loadResult, values, H2loadParseError, "h2load")


TOOL = LoadTool(
    name="h2load",
    program="h2load",
    version_flag="--version",
    parse=parse_h2load_output,
    cpu="h2load's own CPU time (all its threads)",
    tool_limited_at_ceiling=False,
    connections="HTTP/1.1 keep-alive (h2load --h1)",
)


class H2loadCell(ExternalCell):
    """An h2load cell: -n requests (from the profile) over -c clients on -t threads, HTTP/1.1 keep-alive."""

    TOOL: ClassVar[LoadTool] = TOOL
    keepalive: ClassVar[bool] = True

    tool: Literal["h2load"] = "h2load"
    clients: int = Field(ge=1, le=20000)
    threads: int = Field(default=1, ge=1, le=64)

    @property
    def concurrency(self) -> int:
        return self.clients

    @model_validator(mode="before")
    @classmethod
    def _default_names(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("clients"), int):
            c = data["clients"]
            data = {"name": f"h2load-c{c}", "label": f"h2load -c {c}", **data}
        return data

    def argv(self, url: str, requests: int, program: str, socket_timeout_s: int) -> list[str]:
        """Bounded by -n and, per connection, by -N (no activity for the socket timeout)."""
        return [
            program,
            "--h1",
            "-n",
            str(requests),
            "-c",
            str(self.clients),
            "-t",
            str(self.threads),
            "-N",
            f"{socket_timeout_s}s",
            url,
        ]


class H2loadCellRun(CellRunBase[H2loadResult]):
    """h2load --h1 -n requests -c clients -t threads."""

    TOOL: ClassVar[LoadTool] = TOOL
    keepalive: ClassVar[bool] = True

    tool: Literal["h2load"] = "h2load"
    clients: int = Field(ge=1)
    threads: int = Field(ge=1)
    requests: Count

    @property
    def request_ceiling(self) -> int | None:
        return self.requests

    @property
    def concurrency(self) -> int:
        return self.clients


H2loadCell.RUN = H2loadCellRun  # the record a subject's repetitions in such a cell are kept in
