"""Statistics over the repetitions of one cell run, metric by metric (see `metrics`)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from benchsite.results.intervals import Interval, median_interval
from benchsite.results.metrics import METRICS, RPS, Metric, MetricName, metric_values
from benchsite.tools import AnyCellRun

NOISY_CV_PERCENT = 10.0  # above this, a cell's req/s say so on the page
MIN_USABLE = 3  # fewer usable repetitions than this, likewise


@dataclass(frozen=True)
class CellSummary:
    """What a results table shows for one subject's cell run: every metric's values, counts and flags."""

    repetitions_ok: int  # worked and counted
    repetitions_failed: int
    repetitions_disturbed: int  # worked, but others took the CPUs meanwhile: shown, not counted
    values: dict[MetricName, tuple[float, ...]]  # each good repetition's value, in round order
    failed_requests: int
    non_2xx_responses: int
    keepalive_honoured: bool | None
    failure_reasons: tuple[str, ...]
    # Each disturbed repetition's req/s: others' work only slows the server it hits, so each is a lower bound on
    # what the server does; shown where no quiet repetition was, labelled, never pooled with the quiet ones.
    disturbed_rps: tuple[float, ...] = ()
    # Disturbed repetitions counted all the same, in a run accepted busy (--accept-busy): its figures may be low.
    disturbed_counted: int = 0

    def median(self, of: Metric = RPS) -> float | None:
        values = self.values[of.name]
        return statistics.median(values) if values else None

    def at_least_rps(self) -> float | None:
        """Where every repetition that worked was disturbed: the median of their req/s, which the server's own
        rate is at least (None where some were quiet, or none worked)."""
        if self.values[RPS.name] or not self.disturbed_rps:
            return None
        return statistics.median(self.disturbed_rps)

    def interval(self, of: Metric = RPS) -> Interval | None:
        """The median with its order-statistic interval."""
        return median_interval(self.values[of.name])

    def cv_percent(self, of: Metric = RPS) -> float | None:
        """Sample standard deviation over mean, in percent (None below two values)."""
        return coefficient_of_variation_percent(list(self.values[of.name]))

    @property
    def problems(self) -> tuple[str, ...]:
        """Why a reader must not take this cell at face value: failed runs, failed or non-2xx requests."""
        problems = []
        if self.repetitions_failed:
            total = self.repetitions_ok + self.repetitions_failed + self.repetitions_disturbed
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
                f"raise rounds in {conf_file} for an interval"
            )
        cv = self.cv_percent()
        if cv is not None and cv > NOISY_CV_PERCENT:
            warnings.append(
                f"CV {cv:.0f}% of req/s: the machine was busy or the server unsteady; "
                "re-run on a quiet machine, or raise rounds or max_rounds"
            )
        return tuple(warnings)


def coefficient_of_variation_percent(values: list[float]) -> float | None:
    """Sample standard deviation over mean, in percent (None below two values)."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return 100.0 * statistics.stdev(values) / mean if mean else None


def summarize(cell: AnyCellRun, with_disturbed: bool = False) -> CellSummary:
    """Every metric of a cell run's counted repetitions; failed and disturbed ones are counted, not averaged
    (with_disturbed, as in a run accepted busy, the disturbed ones are averaged too and counted as such)."""
    worked = [rep for rep in cell.repetitions if rep.ok]
    good = worked if with_disturbed else [rep for rep in worked if not rep.disturbed]
    results = [rep.result for rep in worked if rep.result is not None]
    honoured = [result.keepalive_honoured for result in results if result.keepalive_honoured is not None]
    return CellSummary(
        repetitions_ok=len(good),
        repetitions_failed=len(cell.repetitions) - len(worked),
        repetitions_disturbed=len(worked) - len(good),
        values={name: tuple(metric_values(cell, of, with_disturbed).values()) for name, of in METRICS.items()},
        failed_requests=sum(r.failed_requests for r in results),
        non_2xx_responses=sum(r.non_2xx_responses for r in results),
        keepalive_honoured=None if not cell.keepalive or not honoured else all(honoured),
        failure_reasons=tuple(dict.fromkeys(rep.error for rep in cell.repetitions if rep.error)),
        disturbed_rps=tuple(
            rate for rep in worked if rep.disturbed and not with_disturbed and (rate := RPS.read(rep)) is not None
        ),
        disturbed_counted=sum(rep.disturbed for rep in good),
    )
