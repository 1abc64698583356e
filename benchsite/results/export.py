"""A run's results as a reader can take them away: one CSV row per subject and cell."""

from __future__ import annotations

import csv
import io

from benchsite.model.run import RunDocument
from benchsite.results.figures import figure

COLUMNS = (
    "subject",
    "subject_label",
    "cell",
    "cell_label",
    "tool",
    "requests_per_cell",
    "repetitions_ok",
    "repetitions_failed",
    "rps_median",
    "rps_interval_low",
    "rps_interval_high",
    "rps_interval_level",
    "rps_cv_percent",
    "server_cpu_us_per_request",
    "load_cpu_us_per_request",
    "mean_time_per_request_ms",
    "latency_p50_ms",
    "latency_p99_ms",
    "keepalive_honoured",
    "status",
)


def results_csv(run: RunDocument) -> str:
    """Every measured subject and cell of a run, with the medians and intervals the page shows (CSV text)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for subject in run.subjects:
        for cell in subject.cells:
            found = figure(run, subject.name, cell.name)
            assert found is not None
            s, interval = found.summary, found.summary.rps_interval
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
                    *(
                        "" if value is None else f"{value:.6g}"
                        for value in (
                            s.rps_median,
                            interval.low if interval else None,
                            interval.high if interval else None,
                            interval.level if interval else None,
                            s.rps_cv_percent,
                            s.server_cpu_us_per_request_median,
                            s.tool_cpu_us_per_request_median,
                            s.time_per_request_ms_median,
                            s.latency_ms_p50_median,
                            s.latency_ms_p99_median,
                        )
                    ),
                    "" if s.keepalive_honoured is None else str(s.keepalive_honoured).lower(),
                    found.status,
                ]
            )
    return out.getvalue()
