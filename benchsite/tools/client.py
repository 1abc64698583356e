"""HTTP clients as the subjects under test: each client program reports on its own run.

A client program makes N sequential requests after a warm-up it excludes, timing
itself, and prints one JSON object (the format below). The harness keeps that
line verbatim and reads it back into a ClientResult.
"""

from __future__ import annotations

import json
from typing import ClassVar, Literal

from benchsite.errors import BenchError
from benchsite.records import Pair, Seq, UrlPath
from benchsite.tools.base import (
    CellBase,
    CellRunBase,
    Count,
    LoadTool,
    Positive,
    ToolResult,
    build_report,
)

CLIENT_REPORT_KEYS = (
    "client",
    "mode",
    "url",
    "requests",
    "cpu_s",
    "wall_s",
    "bytes_received",
    "errors",
    "non_2xx_responses",
    "versions",
)


class ClientParseError(BenchError):
    """A client program printed something other than its one-line JSON report."""


class ClientResult(ToolResult):
    """One client run: its own CPU and wall time over the measured requests."""

    tool: Literal["client"] = "client"
    client: str
    mode: str
    url: str
    complete_requests: Count
    cpu_s: Positive
    wall_s: Positive
    bytes_received: Count
    errors: Count
    non_2xx_responses: Count
    versions: dict[str, str]
    percentiles_ms: Seq[Pair[int, float]] = ()  # a client program reports no latency distribution

    @property
    def requests_per_s(self) -> float:
        return self.complete_requests / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_us_per_request(self) -> float | None:
        """The client process's own CPU time per request, the seed's main measure."""
        return self.cpu_s * 1e6 / self.complete_requests if self.complete_requests else None

    @property
    def time_per_request_ms(self) -> float:
        return self.wall_s * 1000 / self.complete_requests if self.complete_requests else 0.0

    @property
    def failed_requests(self) -> int:
        return self.errors

    @property
    def measured_s(self) -> float:
        """How long the tool says it measured: the client's own clock over its requests."""
        return self.wall_s

    @property
    def keepalive_honoured(self) -> bool | None:
        return None


def parse_client_output(report: str) -> ClientResult:
    """Read the client's JSON line; anything else is an error naming what is missing."""
    lines = [line for line in report.splitlines() if line.strip()]
    if not lines:
        raise ClientParseError("the client printed nothing: it must print one JSON report line")
    try:
        data = json.loads(lines[-1])
    except json.JSONDecodeError as error:
        raise ClientParseError(f"the client's last line is not JSON ({error.msg})") from None
    missing = [key for key in CLIENT_REPORT_KEYS if key not in data]
    if missing:
        raise ClientParseError(f"the client's report lacks {', '.join(missing)}")
    try:
        values = dict(
            client=str(data["client"]),
            mode=str(data["mode"]),
            url=str(data["url"]),
            complete_requests=int(data["requests"]) - int(data["errors"]),
            cpu_s=float(data["cpu_s"]),
            wall_s=float(data["wall_s"]),
            bytes_received=int(data["bytes_received"]),
            errors=int(data["errors"]),
            non_2xx_responses=int(data["non_2xx_responses"]),
            versions={str(k): str(v) for k, v in dict(data["versions"]).items()},
        )
    except (TypeError, ValueError) as error:
        raise ClientParseError(f"the client's report has a value of the wrong type ({error})") from None
    return build_report(ClientResult, values, ClientParseError, "the client")


TOOL = LoadTool(
    name="client",
    program=None,  # the subject under test makes the load itself
    version_flag=None,
    parse=parse_client_output,
    cpu="the client's own CPU time over its timed requests",
    tool_limited_at_ceiling=False,
    connections="one request at a time, as the client makes them",
)


class ClientCell(CellBase):
    """A cell of a client under test: the URL scheme and path it requests, one request at a time."""

    TOOL: ClassVar[LoadTool] = TOOL
    keepalive: ClassVar[bool] = False
    concurrency: ClassVar[int] = 1
    loads_a_server: ClassVar[bool] = False  # the client under test talks to the recipe's backend

    tool: Literal["client"] = "client"
    scheme: Literal["http", "https"] = "http"
    path: UrlPath


class ClientCellRun(CellRunBase[ClientResult]):
    """A client under test making `requests` sequential requests."""

    TOOL: ClassVar[LoadTool] = TOOL
    keepalive: ClassVar[bool] = False
    concurrency: ClassVar[int] = 1

    tool: Literal["client"] = "client"
    requests: Count

    @property
    def request_ceiling(self) -> int | None:
        return self.requests

    @property
    def amount(self) -> str:
        return f"{self.requests} requests by the client"


ClientCell.RUN = ClientCellRun  # the record a subject's repetitions in such a cell are kept in
