"""Every number the pages show per repetition, as one registry of `Metric` records.

A metric has one name everywhere: in recipes' claims (`metric = "load-cpu"`), in directive
options (`:metric: load-cpu`), in exports, and in the code. Stats, pivots, charts, claims and
exports all read a repetition through the metric's `read`, and print through its `fmt`; the results
table's and the CSV's columns are the metrics marked `tabled` and `exported`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from benchsite.errors import BenchError
from benchsite.tools import AnyCellRun
from benchsite.tools.base import Repetition
from benchsite.tools.client import ClientResult

MetricName = Literal[
    "rps",
    "server-cpu",
    "load-cpu",
    "server-share",
    "load-share",
    "backend-share",
    "time-per-request",
    "latency-p50",
    "latency-p99",
]


@dataclass(frozen=True)
class Metric:
    """One number read from each repetition: its name, how a page heads it, its unit and format."""

    name: MetricName
    heading: str  # an axis label or caption, without the unit
    column: str  # a table's column heading, with the unit: "Server CPU µs/req"
    unit: str
    read: Callable[[Repetition[Any]], float | None]  # None: this repetition says nothing on it
    better: Literal["higher", "lower"]
    decimals: int
    published: Literal["requests_per_s", "cpu_us_per_request"] | None  # the original pages' figure of it
    explained: str = ""  # its line in the glossary
    exported: bool = True  # a column of its median in the results CSV
    tabled: bool = False  # a column of its median in a page's results table
    formatter: Callable[[float], str] | None = None  # how a page prints it, where not by its decimals

    def fmt(self, value: float | None) -> str:
        """The value as a page prints it; "—" where there is none."""
        if value is None:
            return "—"
        if self.formatter is not None:
            return self.formatter(value)
        return f"{value:.{self.decimals}f}%" if self.unit == "%" else f"{value:,.{self.decimals}f}"

    @property
    def titled(self) -> str:
        """The heading with its unit: "server CPU per request (µs)"."""
        return f"{self.heading} ({self.unit})"


def fmt_latency(ms: float | None) -> str:
    """A latency with the digits it has: "85 µs" below a millisecond (wrk), "< 1 ms" for ab's whole-ms 0,
    whole milliseconds as such ("3 ms"), others to two decimals ("1.27 ms")."""
    if ms is None:
        return "—"
    if ms == 0:
        return "< 1 ms"  # ab reports whole milliseconds, rounded down
    if ms < 1:
        return f"{ms * 1000:,.0f} µs"
    return f"{ms:,.0f} ms" if float(ms).is_integer() else f"{ms:,.2f} ms"


def _rps(rep: Repetition[Any]) -> float | None:
    return rep.result.requests_per_s if rep.result is not None else None


def _load_cpu(rep: Repetition[Any]) -> float | None:
    """A client under test reports the CPU of its own timed loop; for a load tool, its measured CPU."""
    if isinstance(rep.result, ClientResult):
        return rep.result.cpu_us_per_request
    return rep.per_request_us(rep.load_cpu_s)


def _share(cpu_s: float, rep: Repetition[Any]) -> float | None:
    return 100 * cpu_s / rep.wall_s if rep.wall_s else None


def _percentile(percent: int) -> Callable[[Repetition[Any]], float | None]:
    return lambda rep: rep.result.response_time_ms(percent) if rep.result is not None else None


METRICS: dict[MetricName, Metric] = {
    metric.name: metric
    for metric in (
        Metric(
            name="rps",
            heading="requests per second",
            column="Median req/s",
            unit="req/s",
            read=_rps,
            better="higher",
            decimals=0,
            published="requests_per_s",
            explained="requests the load tool completed per second in one repetition",
            exported=False,
        ),
        Metric(
            name="server-cpu",
            heading="server CPU per request",
            column="Server CPU µs/req",
            unit="µs",
            read=lambda rep: rep.per_request_us(rep.server_cpu_s),
            better="lower",
            decimals=0,
            published=None,
            explained="the server process tree's CPU time (user and kernel) per completed request",
            exported=True,
            tabled=True,
        ),
        Metric(
            name="load-cpu",
            heading="load CPU per request",
            column="Load CPU µs/req",
            unit="µs",
            read=_load_cpu,
            better="lower",
            decimals=0,
            published="cpu_us_per_request",
            explained="the load tool's own CPU time per request (a client under test: its timed loop's)",
            exported=True,
            tabled=True,
        ),
        Metric(
            name="server-share",
            heading="server CPU share of the wall time",
            column="Server CPU share",
            unit="%",
            read=lambda r: _share(r.server_cpu_s, r),
            better="lower",
            decimals=1,
            published=None,
            explained="the server's CPU time as a share of the repetition's wall time",
            exported=False,
        ),
        Metric(
            name="load-share",
            heading="the load tool's CPU share of the wall time",
            column="Load CPU share",
            unit="%",
            read=lambda r: _share(r.load_cpu_s, r),
            better="lower",
            decimals=1,
            published=None,
            explained="the load tool's CPU time as a share of the wall time: near 100 % the tool, not the server, "
            "sets the pace",
            exported=False,
        ),
        Metric(
            name="backend-share",
            heading="the backends' CPU share of the wall time",
            column="Backend CPU share",
            unit="%",
            read=lambda rep: _share(sum(rep.backend_cpu_s.values()), rep) if rep.backend_cpu_s else None,
            better="lower",
            decimals=1,
            published=None,
            explained="the backends' CPU time (an SCGI process, a test API) as a share of the wall time",
            exported=False,
        ),
        Metric(
            name="time-per-request",
            heading="mean time per request",
            column="Mean ms/req",
            unit="ms",
            read=lambda rep: rep.result.time_per_request_ms if rep.result is not None else None,
            better="lower",
            decimals=2,
            published=None,
            explained="the load tool's mean time per request, across all concurrent requests",
            exported=True,
            tabled=False,  # concurrency over req/s: the table has req/s
        ),
        Metric(
            name="latency-p50",
            heading="median response time (closed loop)",
            column="Resp. p50",
            unit="ms",
            read=_percentile(50),
            better="lower",
            decimals=2,
            published=None,
            explained="the median request's time to answer under the load tool's closed loop, as the tool reports it "
            "(not the open-loop latency of a page's latency section)",
            exported=True,
            tabled=True,
            formatter=fmt_latency,
        ),
        Metric(
            name="latency-p99",
            heading="99th percentile response time (closed loop)",
            column="Resp. p99",
            unit="ms",
            read=_percentile(99),
            better="lower",
            decimals=2,
            published=None,
            explained="the 99th percentile request's time to answer under the load tool's closed loop, as the tool "
            "reports it (not the open-loop latency of a page's latency section)",
            exported=True,
            tabled=True,
            formatter=fmt_latency,
        ),
    )
}
assert set(METRICS) == set(get_args(MetricName)), "every metric name has its record"

RPS = METRICS["rps"]


def metric(name: str) -> Metric:
    """A metric by name; an unknown one is a one-line error listing the known ones."""
    try:
        return METRICS[name]  # type: ignore[index]
    except KeyError:
        raise BenchError(f"unknown metric {name!r}: I know about {', '.join(METRICS)}") from None


def metric_values(cell: AnyCellRun, of: Metric, with_disturbed: bool = False) -> dict[int, float]:
    """Each counted repetition's value on a metric (worked, not disturbed), by round; with_disturbed, the
    disturbed ones too (a run accepted busy: `RunDocument.accepted_busy`)."""
    values = {}
    for rep in cell.repetitions:
        if rep.counted or (with_disturbed and rep.ok):
            value = of.read(rep)
            if value is not None:
                values[rep.index] = value
    return values
