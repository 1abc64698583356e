"""The chart of one metric over a run's cells: grouped bars, sorted bars for many subjects, or lines."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.results.intervals import Interval, levels_label
from benchsite.results.metrics import METRICS, RPS, metric
from benchsite.sphinxext.base import BenchDirective, selected
from benchsite.sphinxext.chartspec import CHART_KINDS, Chart, ChartKind, Series
from benchsite.sphinxext.nodes import bench_chart

MAX_GROUPED_BARS = 5  # more subjects than this get sorted horizontal bars


def chart_node(chart: Chart, unit: str) -> bench_chart:
    """The node that draws a chart at write time, with its alt text."""
    node = bench_chart()
    node["chart"] = chart
    node["alt"] = chart.alt_text(unit)
    return node


class BenchChart(BenchDirective):
    """A chart of one metric over the cells: grouped bars, or lines (e.g. req/s against concurrency)."""

    option_spec: ClassVar[dict] = {
        **BenchDirective.option_spec,
        "metric": lambda value: directives.choice(value, tuple(METRICS)),
        "kind": lambda value: directives.choice(value, CHART_KINDS),
        "cells": directives.unchanged,
        "subjects": directives.unchanged,
        "x-label": directives.unchanged,
    }

    def render(self) -> list[nodes.Node]:
        of = metric(self.options.get("metric", "rps"))
        view = self.load_view()
        run = view.run
        cells = selected(self.options.get("cells"), run.cell_names, "cells", run.run_file)
        charted = tuple(s.name for s in run.subjects if s.cells)
        names = selected(self.options.get("subjects"), charted, "subjects", run.run_file)
        # Many subjects: one sorted panel per load setting, so that no label meets another.
        kind: ChartKind = self.options.get("kind", "hbar" if len(names) > MAX_GROUPED_BARS else "bar")
        series = []
        shown: list[Interval | None] = []
        for name in names:
            subject = run.subject(name)
            assert subject is not None
            figures = [view.figure(name, cell) for cell in cells]
            summaries = [f.summary if f else None for f in figures]
            flagged = tuple(bool(f and not f.usable) for f in figures)
            # a flagged figure keeps its number (drawn hatched, as the table prints it); only no figure is "failed"
            busy = tuple(  # every repetition disturbed, none failed: the figure is a lower bound, said so
                bool(s and of is RPS and s.median(of) is None and not s.problems and s.at_least_rps() is not None)
                for s in summaries
            )
            medians = tuple(
                s.at_least_rps() if s and lower else s.median(of) if s else None
                for s, lower in zip(summaries, busy, strict=True)
            )
            intervals = [s.interval(of) if s and of is RPS else None for s in summaries]
            shown += intervals
            series.append(
                Series(
                    label=subject.label,
                    medians=medians,
                    lows=tuple(i.low if i else None for i in intervals),
                    highs=tuple(i.high if i else None for i in intervals),
                    flagged=flagged,
                    colour=charted.index(name),
                    reference=kind == "hbar" and subject.role == "ceiling",
                    absent=tuple(subject.cell(cell) is None for cell in cells),
                    busy=busy,
                )
            )
        whiskers = f"\n(whiskers: {levels_label(shown)} interval)" if kind in ("bar", "hbar") and of is RPS else ""
        chart = Chart(
            kind=kind,
            title=f"{run.title} — run {run.run_id}",
            x_label=self.options.get("x-label", "load setting"),
            y_label=f"median {of.titled}" + whiskers,
            categories=tuple(run.cell_label(cell) for cell in cells),
            series=tuple(series),
        )
        return [chart_node(chart, of.unit)]
