"""Statistics over the repetitions of one cell."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchsite.model.run import AbCell, ClientCell, Repetition, WrkCell
from benchsite.results.intervals import Interval, median_interval
from benchsite.tools.ab import AbResult
from benchsite.tools.client import ClientResult
from benchsite.tools.wrk import WrkResult

NOISY_CV_PERCENT = 10.0  # above this, a cell's req/s say so on the page
MIN_USABLE = 3  # fewer usable repetitions than this, likewise


@dataclass(frozen=True)
class CellSummary:
    """What a results table shows for one subject and cell."""

    repetitions_ok: int
    repetitions_failed: int
    rps_median: float | None
    rps_min: float | None
    rps_max: float | None
    rps_cv_percent: float | None  # None with fewer than two good repetitions
    rps_interval: Interval | None  # the median with its order-statistic interval
    time_per_request_ms_median: float | None
    latency_ms_p50_median: float | None
    latency_ms_p99_median: float | None
    server_cpu_us_per_request_median: float | None
    tool_cpu_us_per_request_median: float | None  # for a client under test: its own CPU
    server_cpu_share_percent_median: float | None  # the server's CPU time over the run's wall time
    backend_cpu_share_percent_median: float | None  # the backends' (role server) CPU over the wall time
    failed_requests: int
    non_2xx_responses: int
    keepalive_honoured: bool | None
    failure_reasons: tuple[str, ...]

    @property
    def problems(self) -> tuple[str, ...]:
        """Why a reader must not take this cell at face value: failed runs, failed or non-2xx requests."""
        problems = []
        if self.repetitions_failed:
            total = self.repetitions_ok + self.repetitions_failed
            problems.append(f"failed {self.repetitions_failed} of {total} runs: {'; '.join(self.failure_reasons)}")
        if self.failed_requests:
            problems.append(f"{self.failed_requests:,} failed requests")
        if self.non_2xx_responses:
            problems.append(f"{self.non_2xx_responses:,} non-2xx responses")
        return tuple(problems)

    def noise_warnings(self, conf_file: str) -> tuple[str, ...]:
        """What makes this cell's figure less sure than it looks, and what to change (after hyperfine)."""
        warnings = []
        if 0 < self.repetitions_ok < MIN_USABLE:
            warnings.append(
                f"only {self.repetitions_ok} usable repetition{'s' * (self.repetitions_ok > 1)}: "
                f"raise repetitions in {conf_file} for an interval"
            )
        if self.rps_cv_percent is not None and self.rps_cv_percent > NOISY_CV_PERCENT:
            warnings.append(
                f"CV {self.rps_cv_percent:.0f}% of req/s: the machine was busy or the server unsteady; "
                "re-run on a quiet machine, or raise repetitions or max_rounds"
            )
        return tuple(warnings)


def _median(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


def _own_or_measured_cpu(rep: Repetition) -> float | None:
    """CPU per request the client reported for its timed loop, else the load tool's measured CPU."""
    if isinstance(rep.result, ClientResult):
        return rep.result.cpu_us_per_request
    return rep.tool_cpu_us_per_request


def _share(cpu_s: float, rep: Repetition) -> float | None:
    return 100 * cpu_s / rep.wall_s if rep.wall_s else None


# What one repetition says on each metric the pages show (None: it says nothing on it).
REPETITION_METRICS: dict[str, Callable[[Repetition], float | None]] = {
    "rps": lambda rep: rep.result.requests_per_s if rep.result is not None else None,
    "client-cpu": _own_or_measured_cpu,
    "server-cpu": lambda rep: rep.server_cpu_us_per_request,
    "server-share": lambda rep: _share(rep.server_cpu_s, rep),
    "backend-share": lambda rep: _share(sum(rep.backend_cpu_s.values()), rep) if rep.backend_cpu_s else None,
}


def metric_values(cell: AbCell | WrkCell | ClientCell, metric: str) -> dict[int, float]:
    """Each good repetition's value on a metric, by round."""
    values = {}
    for rep in cell.repetitions:
        if rep.ok:
            value = REPETITION_METRICS[metric](rep)
            if value is not None:
                values[rep.index] = value
    return values


def coefficient_of_variation_percent(values: list[float]) -> float | None:
    """Sample standard deviation over mean, in percent (None below two values)."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return 100.0 * statistics.stdev(values) / mean if mean else None


def summarize(cell: AbCell | WrkCell | ClientCell) -> CellSummary:
    """Median, spread and flags of a cell's repetitions; failed ones are counted, not averaged."""
    good = [rep for rep in cell.repetitions if rep.ok and rep.result is not None]
    results: list[AbResult | WrkResult | ClientResult] = [rep.result for rep in good if rep.result is not None]
    rps = [result.requests_per_s for result in results]
    honoured = [result.keepalive_honoured for result in results if result.keepalive_honoured is not None]
    return CellSummary(
        repetitions_ok=len(good),
        repetitions_failed=len(cell.repetitions) - len(good),
        rps_median=_median(rps),
        rps_min=min(rps) if rps else None,
        rps_max=max(rps) if rps else None,
        rps_cv_percent=coefficient_of_variation_percent(rps),
        rps_interval=median_interval(rps),
        time_per_request_ms_median=_median([r.time_per_request_ms for r in results]),
        latency_ms_p50_median=_median([r.percentile_ms(50) for r in results]),
        latency_ms_p99_median=_median([r.percentile_ms(99) for r in results]),
        server_cpu_us_per_request_median=_median([rep.server_cpu_us_per_request for rep in good]),
        tool_cpu_us_per_request_median=_median([_own_or_measured_cpu(rep) for rep in good]),
        server_cpu_share_percent_median=_median([100 * rep.server_cpu_s / rep.wall_s for rep in good if rep.wall_s]),
        backend_cpu_share_percent_median=_median(
            [100 * sum(rep.backend_cpu_s.values()) / rep.wall_s for rep in good if rep.wall_s and rep.backend_cpu_s]
        ),
        failed_requests=sum(r.failed_requests for r in results),
        non_2xx_responses=sum(r.non_2xx_responses for r in results),
        keepalive_honoured=None if not cell.keepalive or not honoured else all(honoured),
        failure_reasons=tuple(dict.fromkeys(rep.error for rep in cell.repetitions if rep.error)),
    )
