"""Every stored run of a recipe side by side: when, where and with what versions, and each cell's median."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.model.run import RunDocument
from benchsite.results.machines import MachineRuns, picked_by
from benchsite.results.metrics import RPS
from benchsite.results.view import RunView
from benchsite.sphinxext.base import BenchDirective, selected
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.tables import table, with_interval


def short_run_name(run_id: str) -> str:
    """20261122T054028.494645Z-full as a column heading that can wrap: 2026-11-22 05:40:28 full."""
    day, time = run_id[:8], run_id[9:15]
    rest = run_id.split("Z", 1)[1].lstrip("-")
    return f"{day[:4]}-{day[4:6]}-{day[6:]} {time[:2]}:{time[2:4]}:{time[4:]} {rest}".strip()


def interference(view: RunView) -> str:
    """What a run's history row says of the machine's state: its disturbed repetitions, and the pre-run check."""
    check = view.run.machine_check
    said = view.interference_said()
    if check is None:
        return said
    return f"{said}; before it: {'quiet' if check.quiet else 'busy'}, {100 * check.busy_cpus:.0f} % of a CPU taken"


def noise(view: RunView) -> str:
    """A run's noise in words: the median CV of req/s over its cells."""
    found = view.noise_percent
    return "—" if found is None else f"median CV {found:.1f} %"


class BenchHistory(BenchDirective):
    """Every stored run of a recipe, machine by machine: when, with what versions, and each cell's median,
    one table and one chart per machine (numbers of different machines are never joined)."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "cells": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        groups = self.machine_runs()
        shown = groups[0].main.run
        cells = selected(self.options.get("cells"), shown.cell_names, "cells", shown.run_file)
        step = picked_by(groups[0].views)
        picked = f" Here {step} picked it." if step else " It is the machine's only run."
        runs = "busy runs (it has no quiet one)" if groups[0].only_busy else "quiet runs"
        output: list[nodes.Node] = [
            nodes.paragraph(
                "",
                f"Every section of the page reads {shown.run_id} of its reference machine, {shown.machine.name}: of "
                f"its {runs}, the one with the most sections measured (latency, memory), then the most usable "
                "figures, then the least noise (the median CV of req/s over its cells), then the most kinds of "
                f"record, then the latest.{picked} Its other {runs.split(' (')[0]} are pooled into the verdicts with "
                "their weight. A run measured on a busy machine (more than its limit of repetitions disturbed by other "
                "work) is listed below, labelled, and left out where its machine has quiet runs; a machine with busy "
                "runs alone is read from them. Each machine's runs, with the median req/s of every cell and its "
                "interval (95 %; with five repetitions, the min–max range: 93.8 %). Runs of one machine on other "
                "days differ in more than noise: ",
                nodes.literal(text="invoke compare"),
                nodes.Text(" counts that drift."),
            )
        ]
        for group in groups:
            output += self._machine(group, cells, groups[0].main, step or "the only run")
        return output

    def _machine(self, group: MachineRuns, cells: tuple[str, ...], shown: RunView, step: str) -> list[nodes.Node]:
        views = list(group.every_run)
        runs = [view.run for view in views]
        heading = nodes.rubric(text=f"{group.label}: {len(runs)} run{'s' * (len(runs) != 1)}")
        about = nodes.paragraph(text=f"{group.machine.description} (machine {group.machine.id}).")
        listing = table(
            ("Run", "Profile", "Started (UTC)", "Versions", "Noise", "Interference"),
            [
                [
                    run.run_id + (f" (shown: {step})" if view is shown else ""),
                    run.profile.name,
                    run.started_at,
                    run.environment.shown("packages"),
                    noise(view),
                    interference(view),
                ]
                for view, run in zip(views, runs, strict=True)
            ],
        )
        latest = runs[-1]
        rows = []
        for subject in latest.measured:
            for cell in cells:
                values = []
                for view in views:
                    summary = view.summaries.get((subject.name, cell))
                    values.append(with_interval(summary.median(), summary.interval(), RPS.fmt) if summary else "—")
                rows.append([subject.label, cell, *values])
        medians = table(("Subject", "Cell", *(short_run_name(run.run_id) for run in runs)), rows)
        return [heading, about, listing, medians, self._chart(group, views, latest, cells)]

    def _chart(
        self, group: MachineRuns, views: list[RunView], latest: RunDocument, cells: tuple[str, ...]
    ) -> nodes.Node:
        """Median req/s over one machine's runs, by date: one line per subject and cell."""
        series = []
        for subject in latest.measured:
            for cell in cells:
                summaries = [view.summaries.get((subject.name, cell)) for view in views]
                medians = tuple(summary.median() if summary else None for summary in summaries)
                series.append(
                    Series(
                        f"{subject.label}, {cell}",
                        medians,
                        medians,
                        medians,
                        flagged=tuple(bool(summary and summary.problems) for summary in summaries),
                        absent=tuple(summary is None for summary in summaries),
                    )
                )
        chart = Chart(
            kind="line",
            title=f"{latest.title} on {group.label}: median req/s by run",
            x_label="date of the run (UTC)",
            y_label="median requests per second",
            categories=tuple(short_run_name(view.run.run_id)[5:16] for view in views),  # 11-22 05:40
            series=tuple(series),
            times=tuple(view.run.started_at for view in views),
        )
        return chart_node(chart, RPS.unit)
