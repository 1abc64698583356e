"""Directives that lay one metric out as a grid (subjects × cells), and differences between subjects."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.errors import BenchError
from benchsite.model.published import Published
from benchsite.model.run import RunDocument
from benchsite.results.figures import FLAG_LEGEND, figure
from benchsite.results.intervals import Interval, difference_interval, median_interval
from benchsite.results.stats import CellSummary, metric_values
from benchsite.sphinxext.comparison import PublishedDirective
from benchsite.sphinxext.directives import BenchDirective, selected
from benchsite.sphinxext.tables import fmt_percent, fmt_rps, fmt_us, table, with_interval

# metric -> (heading, value from today's summary, value from the published page, format)
METRICS: dict[str, tuple[str, Callable[[CellSummary], float | None], str | None, Callable]] = {
    "rps": ("median requests/s", lambda s: s.rps_median, "rps", fmt_rps),
    "client-cpu": ("client CPU µs per request (median)", lambda s: s.tool_cpu_us_per_request_median, "cpu_us", fmt_us),
    "server-cpu": ("server CPU µs per request (median)", lambda s: s.server_cpu_us_per_request_median, None, fmt_us),
    "server-share": (
        "server CPU share of the run's wall time",
        lambda s: s.server_cpu_share_percent_median,
        None,
        fmt_percent,
    ),
    "backend-share": (
        "the backends' CPU share of the run's wall time",
        lambda s: s.backend_cpu_share_percent_median,
        None,
        fmt_percent,
    ),
}


def _metric(value: str) -> str:
    return directives.choice(value, tuple(METRICS))


def today_value(run: RunDocument, metric: str, subject: str, cell: str) -> tuple[float | None, bool]:
    """A cell's figure today (None where it did not run or every repetition failed), and whether it is flagged."""
    found = figure(run, subject, cell)
    if found is None:
        return None, False
    return METRICS[metric][1](found.summary), not found.usable


def today_interval(run: RunDocument, metric: str, subject: str, cell: str) -> Interval | None:
    """The median of a cell's repetitions on a metric, with its order-statistic interval."""
    record = run.subject(subject)
    cell_record = record.cell(cell) if record else None
    return median_interval(list(metric_values(cell_record, metric).values())) if cell_record else None


def published_value(published: Published | None, metric: str, subject: str, cell: str) -> float | None:
    found = published.figure(subject, cell) if published else None
    if found is None:
        return None
    return {"rps": found.requests_per_s, "cpu_us": found.cpu_us_per_request}.get(METRICS[metric][2] or "")


class BenchPivot(PublishedDirective):
    """One metric for every subject (rows) and cell (columns), or transposed; optionally beside the original's."""

    option_spec: ClassVar[dict] = {
        **BenchDirective.option_spec,
        "metric": _metric,
        "rows": lambda value: directives.choice(value, ("subjects", "cells")),
        "subjects": directives.unchanged,
        "cells": directives.unchanged,
        "published": directives.flag,
    }

    def render(self) -> list[nodes.Node]:
        run = self.load_run()
        metric = self.options.get("metric", "rps")
        heading, _, published_name, fmt = METRICS[metric]
        published = self.load_published() if "published" in self.options else None
        if published is not None and published_name is None:
            raise BenchError(f"bench-pivot: the original pages have no {metric!r} figures: drop :published:")
        names = tuple(s.name for s in run.measured) + tuple(s.name for s in run.skipped)
        subjects = selected(self.options.get("subjects"), names, "subjects", run.run_file)
        cells = selected(self.options.get("cells"), run.cell_names, "cells", run.run_file)
        labels = run.subject_labels
        cell_labels = {c.name: c.label for s in run.subjects for c in s.cells}
        by_subject = self.options.get("rows", "subjects") == "subjects"
        rows_names, column_names = (subjects, cells) if by_subject else (cells, subjects)
        row_labels, column_labels = (labels, cell_labels) if by_subject else (cell_labels, labels)
        headers = [""]
        for column in column_names:
            headers.append(column_labels[column])
            if published is not None:
                headers.append(f"{column_labels[column]} (published)")
        rows = []
        any_flagged = False
        for row in rows_names:
            line = [row_labels[row]]
            for column in column_names:
                subject, cell = (row, column) if by_subject else (column, row)
                value, flagged = today_value(run, metric, subject, cell)
                any_flagged = any_flagged or flagged
                shown = with_interval(value, today_interval(run, metric, subject, cell), fmt)
                line.append(shown + (" ⚑" if flagged else ""))
                if published is not None:
                    line.append(fmt(published_value(published, metric, subject, cell)))
            rows.append(line)
        caption = nodes.paragraph(
            text=f"{heading[0].upper()}{heading[1:]}, run {run.run_id}"
            + ("; the original's figures beside today's." if published else ".")
        )
        legend = [nodes.paragraph(text=FLAG_LEGEND)] if any_flagged else []
        return [caption, table(headers, rows), *legend]


class BenchDifference(PublishedDirective):
    """The difference of one metric between pairs of subjects, e.g. what opening a connection costs."""

    option_spec: ClassVar[dict] = {
        **BenchDirective.option_spec,
        "metric": _metric,
        "pairs": directives.unchanged_required,
        "cells": directives.unchanged_required,
    }

    def render(self) -> list[nodes.Node]:
        run, published = self.load_run(), self.load_published()
        metric = self.options.get("metric", "client-cpu")
        heading, _, _, fmt = METRICS[metric]
        pairs = []
        for text in self.options["pairs"].split(","):
            parts = [part.strip() for part in text.split(" - ")]
            if len(parts) != 2:
                raise BenchError(f"bench-difference: pair {text.strip()!r} must read 'subject - subject'")
            pairs.append(parts)
        cells = selected(self.options["cells"], run.cell_names, "cells", run.run_file)
        labels = run.subject_labels
        rows = []
        for first, second in pairs:
            for name in (first, second):
                if name not in labels:
                    raise BenchError(f"bench-difference: {name!r} is not a subject of {run.run_file}")
            for cell in cells:
                today = _paired_difference(run, metric, (first, cell), (second, cell))
                then = _difference(
                    published_value(published, metric, first, cell), published_value(published, metric, second, cell)
                )
                shown = "—" if today is None else with_interval(today.value, today, fmt)
                rows.append([f"{labels[first]} − {labels[second]}", cell, fmt(then), shown])
        note = nodes.paragraph(
            text="Today: the mean of the differences measured round by round, with its 95 % "
            "interval; a flagged cell gives none."
        )
        return [table((f"Difference in {heading}", "Cell", "Published", "Today [95 % interval]"), rows), note]


def _paired_difference(
    run: RunDocument, metric: str, first: tuple[str, str], second: tuple[str, str]
) -> Interval | None:
    """first − second from the rounds that measured both usable cells."""
    values = []
    for subject, cell in (first, second):
        found, record = figure(run, subject, cell), run.subject(subject)
        cell_record = record.cell(cell) if record else None
        if found is None or not found.usable or cell_record is None:
            return None
        values.append(metric_values(cell_record, metric))
    a, b = values
    return difference_interval([a[r] - b[r] for r in sorted(a.keys() & b.keys())])


def _difference(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else first - second
