"""Directives that lay one metric out as a grid (subjects × cells), and differences between subjects."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.errors import BenchError
from benchsite.results.figures import FLAG_LEGEND
from benchsite.results.intervals import Interval, difference_interval, levels_label
from benchsite.results.metrics import METRICS, RPS, Metric, metric
from benchsite.results.published import Published
from benchsite.results.view import RunView
from benchsite.sphinxext.base import BenchDirective, PublishedDirective, selected
from benchsite.sphinxext.history import short_run_name
from benchsite.sphinxext.nodes import block, data
from benchsite.sphinxext.tables import table, with_interval


def _metric(value: str) -> str:
    return directives.choice(value, tuple(METRICS))


def published_value(published: Published | None, of: Metric, subject: str, cell: str) -> float | None:
    """The original page's figure of a metric, where it printed one."""
    found = published.figure(subject, cell) if published else None
    if found is None or of.published is None:
        return None
    value: float | None = getattr(found, of.published)
    return value


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
        view = self.load_view()
        run = view.run
        of = metric(self.options.get("metric", "rps"))
        published = self.load_published() if "published" in self.options else None
        if published is not None and of.published is None:
            raise BenchError(f"bench-pivot: the original pages have no {of.name!r} figures: drop :published:")
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
        intervals: list[Interval | None] = []
        for row in rows_names:
            line: list[str | nodes.Node] = [row_labels[row]]
            for column in column_names:
                subject, cell = (row, column) if by_subject else (column, row)
                found = view.figure(subject, cell)
                flagged = found is not None and not found.usable
                summary = found.summary if found else None
                intervals.append(summary.interval(of) if summary else None)
                shown = with_interval(summary.median(of), intervals[-1], of.fmt) if summary else of.fmt(None)
                lower = summary.at_least_rps() if summary and of is RPS and summary.median(of) is None else None
                if (
                    lower is not None and summary is not None and not summary.problems
                ):  # every repetition disturbed: a lower bound, said so
                    shown, flagged = f"at least {lower:,.0f}, busy", False
                any_flagged = any_flagged or flagged
                attributes = {"recipe": run.recipe, "subject": subject, "cell": cell, "metric": of.name}
                line.append(data(shown + (" ⚑" if flagged else ""), source="today", **attributes))
                if published is not None:
                    line.append(
                        data(of.fmt(published_value(published, of, subject, cell)), source="published", **attributes)
                    )
            rows.append(line)
        caption = nodes.paragraph(
            text=f"Median {of.titled} of one run ({short_run_name(run.run_id)} on {run.machine.name}), "
            f"with its {levels_label(intervals)} interval in brackets"
            + ("; the original's figures beside today's" if published else "")
            + ". A verdict's ratio pools every run of the machine round by round, so it can differ from the "
            "ratio of two medians here."
        )
        legend = [nodes.paragraph(text=FLAG_LEGEND)] if any_flagged else []
        grid = block(table(headers, rows), table="pivot", recipe=run.recipe, metric=of.name)
        return [caption, grid, *legend]


class BenchDifference(PublishedDirective):
    """The difference of one metric between pairs of subjects, e.g. what opening a connection costs."""

    option_spec: ClassVar[dict] = {
        **BenchDirective.option_spec,
        "metric": _metric,
        "pairs": directives.unchanged_required,
        "cells": directives.unchanged_required,
    }

    def render(self) -> list[nodes.Node]:
        view, published = self.load_view(), self.load_published()
        run = view.run
        of = metric(self.options.get("metric", "load-cpu"))
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
                today = _paired_difference(view, of, (first, cell), (second, cell))
                then = _difference(
                    published_value(published, of, first, cell), published_value(published, of, second, cell)
                )
                shown = "—" if today is None else with_interval(today.value, today, of.fmt)
                rows.append([f"{labels[first]} − {labels[second]}", cell, of.fmt(then), shown])
        note = nodes.paragraph(
            text="Today: the mean of the differences measured round by round, with its 95 % "
            "interval; a flagged cell gives none."
        )
        headers = (f"Difference in {of.titled}", "Cell", "Published", "Today [95 % interval]")
        return [block(table(headers, rows), table="difference", recipe=run.recipe, metric=of.name), note]


def _paired_difference(view: RunView, of: Metric, first: tuple[str, str], second: tuple[str, str]) -> Interval | None:
    """first − second from the rounds that measured both usable cells."""
    a, b = view.round_values(*first, of), view.round_values(*second, of)
    if a is None or b is None:
        return None
    return difference_interval([a[r] - b[r] for r in sorted(a.keys() & b.keys())])


def _difference(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else first - second
