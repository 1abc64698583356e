"""A run's results as a reader can take them away: one CSV row per subject and cell."""

from __future__ import annotations

import csv
import io

from benchsite.results.metrics import METRICS, RPS, MetricName
from benchsite.results.view import RunView

MEDIAN_COLUMNS: tuple[MetricName, ...] = tuple(name for name, metric in METRICS.items() if metric.exported)
COLUMNS = (
    "subject",
    "subject_label",
    "cell",
    "cell_label",
    "tool",
    "requests_per_cell",
    "repetitions_ok",
    "repetitions_failed",
    "repetitions_disturbed",
    "rps_median",
    "rps_interval_low",
    "rps_interval_high",
    "rps_interval_level",
    "rps_cv_percent",
    # then the median of every exported metric (the registry's `exported`), each column named by the metric
    *MEDIAN_COLUMNS,
    "keepalive_honoured",
    "status",
)


def results_csv(view: RunView) -> str:
    """Every measured subject and cell of a run, with the medians and intervals the page shows (CSV text)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for subject in view.run.subjects:
        for cell in subject.cells:
            found = view.figure(subject.name, cell.name)
            assert found is not None
            s, interval = found.summary, found.summary.interval()
            writer.writerow(
                [
                    subject.name,
                    subject.label,
                    cell.name,
                    cell.label,
                    cell.tool,
                    cell.requests if cell.requests is not None else "",
                    s.repetitions_ok,
                    s.repetitions_failed,
                    s.repetitions_disturbed,
                    *(
                        "" if value is None else f"{value:.6g}"
                        for value in (
                            s.median(RPS),
                            interval.low if interval else None,
                            interval.high if interval else None,
                            interval.level if interval else None,
                            s.cv_percent(RPS),
                            *(s.median(METRICS[name]) for name in MEDIAN_COLUMNS),
                        )
                    ),
                    "" if s.keepalive_honoured is None else str(s.keepalive_honoured).lower(),
                    found.status,
                ]
            )
    return out.getvalue()
