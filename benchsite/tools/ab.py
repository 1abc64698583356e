"""ApacheBench (`ab`): its cell, its argv, its parsed report and its stored cell run.

The parser reads the reports of ab 2.0.40-dev, ab 2.3 (2013 and today's
Debian build) and the Windows builds quoted on the seed pages. Each regular
expression below quotes the report line it reads.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from benchsite.errors import BenchError
from benchsite.records import Record
from benchsite.tools.ab_arithmetic import time_taken_s
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


class AbParseError(BenchError):
    """ab printed something that is not a complete report."""


class ConnectionTimes(Record):
    """One row of ab's "Connection Times (ms)" table."""

    min_ms: float
    mean_ms: float
    sd_ms: float
    median_ms: float
    max_ms: float


class AbResult(ToolResult):
    """Everything one ab report says, with units in the field names."""

    tool: Literal["ab"] = "ab"
    ab_version: str | None
    server_software: str
    server_hostname: str
    server_port: int = Field(ge=0, le=65535)
    document_path: str
    document_length_bytes: Count | None  # None: "Variable" (ab -l)
    concurrency: int = Field(ge=1)
    time_taken_s: Positive
    complete_requests: Count
    failed_requests: Count
    failed_connect: Count
    failed_receive: Count
    failed_length: Count
    failed_exceptions: Count
    write_errors: Count
    keepalive_requests: Count | None  # None: ab ran without -k
    non_2xx_responses: Count
    # Old 32-bit builds (the Cherokee page's Windows ab) overflow past 2 GiB and print a negative count.
    total_transferred_bytes: int
    html_transferred_bytes: int
    requests_per_s: Rate
    time_per_request_ms: Positive
    time_per_request_all_ms: Positive
    transfer_rate_kbytes_s: float  # negative too where the byte count overflowed
    connect_ms: ConnectionTimes
    processing_ms: ConnectionTimes
    waiting_ms: ConnectionTimes
    total_ms: ConnectionTimes
    percentiles_ms: Percentiles

    @property
    def measured_s(self) -> float:
        """How long the tool says it measured: ab's Time taken."""
        return self.time_taken_s

    @property
    def keepalive_honoured(self) -> bool | None:
        """Whether every request reused a connection (None without -k)."""
        if self.keepalive_requests is None:
            return None
        return self.keepalive_requests >= self.complete_requests > 0


_INT = r"(-?\d+)"
_FLOAT = r"(-?\d+(?:\.\d+)?)"
_TEXT = r"(.*?)[^\S\n]*$"

# name -> pattern; each pattern reads the line quoted in its comment.
_LINES: dict[str, str] = {
    # This is ApacheBench, Version 2.3 <$Revision: 1430300 $>
    "ab_version": r"^This is ApacheBench, Version (\S+)",
    # Server Software:        CherryPy/3.2.4      (may be empty)
    "server_software": r"^[^\S\n]*Server Software:[^\S\n]*" + _TEXT,
    # Server Hostname:        localhost
    "server_hostname": r"^[^\S\n]*Server Hostname:[^\S\n]*" + _TEXT,
    # Server Port:            8080
    "server_port": r"^[^\S\n]*Server Port:\s+" + _INT,
    # Document Path:          /
    "document_path": r"^[^\S\n]*Document Path:[^\S\n]*" + _TEXT,
    # Document Length:        2 bytes      (or "Variable" with ab -l)
    "document_length": r"^[^\S\n]*Document Length:\s+(Variable|-?\d+ bytes)",
    # Concurrency Level:      10
    "concurrency": r"^[^\S\n]*Concurrency Level:\s+" + _INT,
    # Time taken for tests:   2.414 seconds
    "time_taken_s": r"^[^\S\n]*Time taken for tests:\s+" + _FLOAT + r" seconds",
    # Complete requests:      1000
    "complete_requests": r"^[^\S\n]*Complete requests:\s+" + _INT,
    # Failed requests:        0
    "failed_requests": r"^[^\S\n]*Failed requests:\s+" + _INT,
    # Write errors:           0        (printed by old versions, and by 2.3 when non-zero)
    "write_errors": r"^[^\S\n]*Write errors:\s+" + _INT,
    # Keep-Alive requests:    1000     (only with -k)
    "keepalive_requests": r"^[^\S\n]*Keep-Alive requests:\s+" + _INT,
    # Non-2xx responses:      1000     (only when non-zero)
    "non_2xx_responses": r"^[^\S\n]*Non-2xx responses:\s+" + _INT,
    # Total transferred:      126000 bytes
    "total_transferred_bytes": r"^[^\S\n]*Total transferred:\s+" + _INT + r" bytes",
    # HTML transferred:       2000 bytes
    "html_transferred_bytes": r"^[^\S\n]*HTML transferred:\s+" + _INT + r" bytes",
    # Requests per second:    414.19 [#/sec] (mean)
    "requests_per_s": r"^[^\S\n]*Requests per second:\s+" + _FLOAT + r" \[#/sec\] \(mean\)",
    # Time per request:       2.414 [ms] (mean)
    "time_per_request_ms": r"^[^\S\n]*Time per request:\s+" + _FLOAT + r" \[ms\] \(mean\)$",
    # Time per request:       0.241 [ms] (mean, across all concurrent requests)
    "time_per_request_all_ms": r"^[^\S\n]*Time per request:\s+"
    + _FLOAT
    + r" \[ms\] \(mean, across all concurrent requests\)",
    # Transfer rate:          50.96 [Kbytes/sec] received
    "transfer_rate_kbytes_s": r"^[^\S\n]*Transfer rate:\s+" + _FLOAT + r" \[Kbytes/sec\] received",
}

# Optional lines: absent means ab's own default for a report that omits them.
_OPTIONAL_DEFAULTS: dict[str, int | str | None] = {
    "ab_version": None,
    "write_errors": 0,
    "keepalive_requests": None,
    "non_2xx_responses": 0,
}

#    (Connect: 0, Receive: 0, Length: 5, Exceptions: 0)    ab 2.3
#    (Connect: 5, Length: 0, Exceptions: 0)                ab 2.0.40
_FAILED_BREAKDOWN = re.compile(r"^\s*\(Connect: (\d+), (?:Receive: (\d+), )?Length: (\d+), Exceptions: (\d+)\)", re.M)
# Connect:        0    0   0.0      0       1
_CONNECTION_ROW = r"^[^\S\n]*{name}:\s+{n}\s+{n}\s+{n}\s+{n}\s+{n}[^\S\n]*$".format(name="{name}", n=_FLOAT)
#   50%      2      ...     100%      8 (longest request)
_PERCENTILE = re.compile(r"^\s*(\d+)%\s+(\d+)(?: \(longest request\))?\s*$", re.M)
#  100%      8 (longest request)    every ab version prints the suffix: without it the report was cut
_LONGEST = re.compile(r"^\s*100%\s+\d+ \(longest request\)\s*$", re.M)


def _search(name: str, pattern: str, report: str) -> str | None:
    match = re.search(pattern, report, re.M)
    return match.group(1) if match else None


def _required(name: str, pattern: str, report: str) -> str:
    value = _search(name, pattern, report)
    if value is None:
        label = name.replace("_", " ")
        raise AbParseError(
            f"ab output has no '{label}' line: not a complete ab report "
            f"(first line: {report.strip().splitlines()[0][:80] if report.strip() else 'empty output'!r})"
        )
    return value


def _connection_row(name: str, report: str) -> ConnectionTimes:
    pattern = _CONNECTION_ROW.format(name=name)
    match = re.search(pattern, report, re.M)
    if not match:
        raise AbParseError(f"ab output has no '{name}:' row in its Connection Times table: the report is cut short")
    low, mean, sd, median, high = (float(group) for group in match.groups())
    return ConnectionTimes(min_ms=low, mean_ms=mean, sd_ms=sd, median_ms=median, max_ms=high)


def _checked_time_taken(text: dict[str, Any]) -> float:
    """The time the report's figures were computed from, read as the ab that wrote it prints it, once its
    derived lines are checked against it (tools/ab_arithmetic.py); bodies against the document length."""
    taken, problems = time_taken_s(text)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise AbParseError(f"ab output disagrees with itself: {problems[0]}{more}")
    _check_bodies(text)
    return taken


def _check_bodies(text: dict[str, Any]) -> None:
    """HTML transferred against Document Length × Complete requests, as ab counts them.

    ab adds a body's bytes to "HTML transferred" as they arrive, and counts a request complete only once its
    reply has ended. A run cut by its time limit (-t) stops with up to one reply per connection read in part
    or whole but not yet counted, so a clean report holds between length × complete and length × (complete +
    concurrency) bytes of bodies; a run that ends by its request count (-n alone) holds exactly the first.
    """
    done = int(text["complete_requests"])
    length, html = text["document_length"], int(text["html_transferred_bytes"])
    clean = int(text["failed_requests"]) == 0 and int(text["non_2xx_responses"]) == 0
    if done <= 0 or not clean or length == "Variable" or html < 0:
        return
    each = int(length.split()[0])
    expected, in_flight = each * done, each * int(text["concurrency"])
    if expected <= html <= expected + in_flight:
        return
    beyond = (
        f"{expected - html} bytes less"
        if html < expected
        else f"{html - expected} bytes more, where a run cut by -t leaves at most {in_flight} "
        f"(one {each}-byte body for each of {text['concurrency']} connections)"
    )
    raise AbParseError(
        f"ab output disagrees with itself: HTML transferred {html} bytes is not Document Length × Complete "
        f"requests ({length} × {done} = {expected} bytes, {beyond})"
    )


def parse_ab_output(report: str) -> AbResult:
    """Parse one ab report; raise AbParseError naming the first missing line."""
    report = "\n".join(line.rstrip() for line in report.splitlines())  # pasted reports carry trailing blanks
    values: dict[str, Any] = {}
    for name, pattern in _LINES.items():
        if name in _OPTIONAL_DEFAULTS:
            raw = _search(name, pattern, report)
            values[name] = _OPTIONAL_DEFAULTS[name] if raw is None else raw
        else:
            values[name] = _required(name, pattern, report)

    time_taken = _checked_time_taken(values)
    length = values.pop("document_length")
    values["document_length_bytes"] = None if length == "Variable" else int(length.split()[0])
    for name in (
        "server_port",
        "concurrency",
        "complete_requests",
        "failed_requests",
        "write_errors",
        "non_2xx_responses",
        "total_transferred_bytes",
        "html_transferred_bytes",
    ):
        values[name] = int(values[name])
    if values["keepalive_requests"] is not None:
        values["keepalive_requests"] = int(values["keepalive_requests"])
    values["time_taken_s"] = time_taken
    for name in (
        "requests_per_s",
        "time_per_request_ms",
        "time_per_request_all_ms",
        "transfer_rate_kbytes_s",
    ):
        values[name] = float(values[name])

    breakdown = _FAILED_BREAKDOWN.search(report)
    if values["failed_requests"] and not breakdown:
        raise AbParseError("ab reported failed requests but no '(Connect: ..., Length: ...)' breakdown")
    connect, receive, length_failures, exceptions = (
        (int(g or 0) for g in breakdown.groups()) if breakdown else (0, 0, 0, 0)
    )
    values.update(
        failed_connect=connect, failed_receive=receive, failed_length=length_failures, failed_exceptions=exceptions
    )

    for row in ("Connect", "Processing", "Waiting", "Total"):
        values[f"{row.lower()}_ms"] = _connection_row(row, report)

    percentiles = tuple((int(p), float(ms)) for p, ms in _PERCENTILE.findall(report))
    if not percentiles or percentiles[-1][0] != 100 or not _LONGEST.search(report):
        raise AbParseError(
            "ab output has no complete 'Percentage of the requests served' table: the report is cut short"
        )
    values["percentiles_ms"] = percentiles
    return build_report(AbResult, values, AbParseError, "ab")


TOOL = LoadTool(
    name="ab",
    program="ab",
    version_flag="-V",
    parse=parse_ab_output,
    cpu="ab's own CPU time",
    tool_limited_at_ceiling=True,  # one thread: against a C server on a static file, ab itself is the limit
    connections="HTTP/1.0, a new connection per request; with -k, HTTP/1.0 keep-alive",
)


class AbCell(ExternalCell):
    """An ab cell: -n requests (from the profile) at -c concurrency, with or without -k."""

    TOOL: ClassVar[LoadTool] = TOOL

    tool: Literal["ab"] = "ab"
    concurrency: int = Field(ge=1, le=20000)
    keepalive: bool = False
    variable_length: bool = False  # ab -l: bodies of varying length are not failures

    @model_validator(mode="before")
    @classmethod
    def _default_names(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("concurrency"), int):
            keepalive = data.get("keepalive") is True
            c = data["concurrency"]
            data = {
                "name": f"c{c}" + ("-k" if keepalive else ""),
                "label": f"-c {c}" + (" -k" if keepalive else ""),
                **data,
            }
        return data

    def argv(self, url: str, requests: int, program: str, socket_timeout_s: int) -> list[str]:
        """Bounded by -n and -s."""
        return build_argv(
            url=url,
            requests=requests,
            concurrency=self.concurrency,
            keepalive=self.keepalive,
            socket_timeout_s=socket_timeout_s,
            variable_length=self.variable_length,
            ab_path=program,
        )

    def time_bounded(self, argv: list[str], seconds: float) -> list[str]:
        return time_bounded(argv, seconds)


class AbCellRun(CellRunBase[AbResult]):
    """ab -n requests -c concurrency [-k]."""

    TOOL: ClassVar[LoadTool] = TOOL

    tool: Literal["ab"] = "ab"
    concurrency: int = Field(ge=1)
    keepalive: bool
    requests: Count

    @property
    def request_ceiling(self) -> int | None:
        return self.requests


AbCell.RUN = AbCellRun  # the record a subject's repetitions in such a cell are kept in


def time_bounded(argv: list[str], seconds: float) -> list[str]:
    """An ab command that also ends after `seconds` (-t), its -n still the ceiling: ab's -t sets -n 50000 unless
    an -n follows it, so -t goes before -n (0: unchanged)."""
    if not seconds:
        return argv
    at = argv.index("-n")
    return [*argv[:at], "-t", f"{seconds:g}", *argv[at:]]


def build_argv(
    *,
    url: str,
    requests: int,
    concurrency: int,
    keepalive: bool,
    socket_timeout_s: int,
    variable_length: bool = False,
    ab_path: str = "ab",
) -> list[str]:
    """The ab command line for one cell, as an argv list (always bounded by -n and -s)."""
    argv = [ab_path]
    if keepalive:
        argv.append("-k")
    if variable_length:
        argv.append("-l")
    argv += ["-s", str(socket_timeout_s), "-n", str(requests), "-c", str(concurrency), url]
    return argv
