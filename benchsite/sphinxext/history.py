"""Every stored run of a recipe side by side: when, where and with what versions, and each cell's median."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.errors import BenchError
from benchsite.model.run import RunDocument
from benchsite.results.metrics import RPS
from benchsite.results.store import list_runs, load_view
from benchsite.results.view import RunView
from benchsite.sphinxext.base import BenchDirective, selected
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.environment import where_roles_ran
from benchsite.sphinxext.tables import table, with_interval


def short_run_name(run_id: str) -> str:
    """20261122T054028.494645Z-full as a column heading that can wrap: 2026-11-22 05:40:28 full."""
    day, time = run_id[:8], run_id[9:15]
    rest = run_id.split("Z", 1)[1].lstrip("-")
    return f"{day[:4]}-{day[4:6]}-{day[6:]} {time[:2]}:{time[2:4]}:{time[4:]} {rest}".strip()


class BenchHistory(BenchDirective):
    """Every stored run of a recipe (machine, date, profile, versions) and its cells' medians side by side."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "cells": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        recipe_dir = self.data_dir() / self.recipe
        self.note_runs(recipe_dir)
        views = [load_view(path) for path in list_runs(recipe_dir, self.config.bench_profile)] or [
            load_view(path) for path in list_runs(recipe_dir)
        ]
        runs = [view.run for view in views]
        if not runs:
            raise BenchError(
                f"{recipe_dir}: no run of recipe {self.recipe!r}: run `.venv/bin/invoke recipe {self.recipe}`"
            )
        for run in runs:
            self.note(run.run_file)
        listing = table(
            ("Run", "Profile", "Started (UTC)", "Machine", "Versions"),
            [
                [
                    run.run_id,
                    run.profile.name,
                    run.started_at,
                    f"{run.environment.cpu_model}, {run.environment.cpu_count} CPUs, {run.environment.os}"
                    + ("" if run.topology is None else f"; {where_roles_ran(run)}"),
                    run.environment.shown("packages"),
                ]
                for run in runs
            ],
        )
        latest = runs[-1]
        cells = selected(self.options.get("cells"), latest.cell_names, "cells", latest.run_file)
        rows = []
        for subject in latest.measured:
            for cell in cells:
                values = []
                for view in views:
                    summary = view.summaries.get((subject.name, cell))
                    values.append(with_interval(summary.median(), summary.interval(), RPS.fmt) if summary else "—")
                rows.append([subject.label, cell, *values])
        medians = table(("Subject", "Cell", *(short_run_name(run.run_id) for run in runs)), rows)
        note = nodes.paragraph(
            text=f"The page shows the latest run, {latest.run_id}; median req/s of every run, with its 95 % interval "
            "(min–max where five repetitions allow no more). Runs on other days or machines differ in more than "
            "noise: compare two with `invoke compare`."
        )
        return [listing, note, medians, self._chart(views, latest, cells)]

    def _chart(self, views: list[RunView], latest: RunDocument, cells: tuple[str, ...]) -> nodes.Node:
        """Median req/s over the runs: one line per subject and cell."""
        series = []
        for subject in latest.measured:
            for cell in cells:
                medians = []
                for view in views:
                    summary = view.summaries.get((subject.name, cell))
                    medians.append(summary.median() if summary and not summary.repetitions_failed else None)
                series.append(Series(f"{subject.label}, {cell}", tuple(medians), tuple(medians), tuple(medians)))
        chart = Chart(
            kind="line",
            title=f"{latest.title}: median req/s by run",
            x_label="run",
            y_label="median requests per second",
            categories=tuple(view.run.run_id for view in views),
            series=tuple(series),
        )
        return chart_node(chart, RPS.unit)
