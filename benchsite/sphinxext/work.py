"""``.. bench-work::``: the work each server does per request, counted in instructions under callgrind,
beside the timed server CPU of the same cell and, with :more: and :less:, the ratio that explains a claim."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.model.portable import shown_command
from benchsite.results.flames import SAMPLE_RATE, flames_of, top_functions
from benchsite.results.machines import best_evidenced
from benchsite.results.view import RunView
from benchsite.results.work import WorkRow, cpu_splits, work_ratio, work_rows, work_said
from benchsite.sphinxext.base import BenchDirective, selected
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.nodes import bench_details, data
from benchsite.sphinxext.tables import table


def _count(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _row(row: WorkRow) -> list[str | nodes.Node]:
    count, split = row.count, row.split
    figure = _count(count.per_request)
    return [
        row.label,
        count.cell,
        nodes.inline("", "", data(nodes.Text(figure), metric="instructions", subject=count.subject, cell=count.cell))
        if count.per_request is not None
        else count.error or "—",
        f"±{100 * count.spread:.2f} % ({len(count.batches)} × {count.batches[0].requests} requests)"
        if count.spread is not None
        else "—",
        _count(row.server_cpu_us),
        "—" if split is None else f"{split.user_us:,.0f} + {split.kernel_us:,.0f}",
        "—" if row.user_ns_per_instruction is None else f"{row.user_ns_per_instruction:.3f}",
    ]


def latest_counted(views: Sequence[RunView]) -> RunView | None:
    """A machine's latest run that counted instructions (a count is exact in one run, and the latest counts as
    the method now does); None where none did."""
    counted = [view for view in views if view.run.counting is not None and view.run.counting.counts]
    return max(counted, key=lambda view: view.run.run_id) if counted else None


def _concurrency_said(view: RunView) -> str:
    """Where the counts ran at a concurrency of their own: what that means for the columns beside them."""
    plan = view.run.profile.counting
    if plan is None or plan.concurrency is None:
        return ""
    return (
        f" The batches run at -c {plan.concurrency}, not at the cell's own concurrency: one request at a time, an "
        "evented or threaded server does the same work for each, where several at once are served a varying "
        "number per wake-up. The timed columns are the cell's own, so the last one divides the cell's user time "
        f"by the work of a request served at -c {plan.concurrency}."
    )


class BenchWork(BenchDirective):
    """The run's instruction counts (the reference machine's best-evidenced run that has them), one row per subject,
    then every machine's counts side by side; with :more: and :less:, the sentence that explains the claim."""

    option_spec: ClassVar[dict] = {
        **BenchDirective.option_spec,
        "more": directives.unchanged,
        "less": directives.unchanged,
        "cell": directives.unchanged,
    }

    def render(self) -> list[nodes.Node]:
        view = self._counted_view()
        counting = view.run.counting
        if counting is None or counting.skipped:
            why = "it was made before instructions were counted" if counting is None else counting.skipped
            return [nodes.paragraph(text=f"Run {view.run.run_id} counted no instructions: {why}.")]
        rows = work_rows(view)
        if not rows:
            return [nodes.paragraph(text=f"Run {view.run.run_id} counted no subject (no server runs a counted cell).")]
        first = next((row.count for row in rows if row.count.argv), None)
        intro = nodes.paragraph(
            text=f"Counted with {counting.counter} in run {view.run.run_id} ({view.run.machine.name}) after its "
            "timed rounds, each server started again under callgrind, warmed up, then counted over fixed batches "
            "of requests"
            + (f" (one batch: {shown_command(first.argv)})" if first else "")
            + ". Instructions are the server's own user-space work: they do not move with the machine's load."
            + _concurrency_said(view)
        )
        headers = (
            "Subject",
            "Cell",
            "Instructions per request (median)",
            "Batches' spread",
            "Server CPU µs/req (timed)",
            "of it user + kernel µs",
            "User ns per instruction",
        )
        out: list[nodes.Node] = [intro, table(headers, [_row(row) for row in rows])]
        more, less = self.options.get("more"), self.options.get("less")
        if more and less:
            ratio = work_ratio(view, more, less, self.options.get("cell", "c1"))
            if ratio is not None:
                out.append(nodes.paragraph(text=work_said(ratio, view.run.subject_labels)))
        out += self._across_machines()
        return out

    def _counted_view(self) -> RunView:
        """The run named by :run:, else the reference machine's latest run that counted (a count is exact in
        one run, and the latest counts as the method now does), else its best-evidenced run."""
        if self.options.get("run"):
            return self.load_view()
        views = self.machine_runs()[0].views
        return latest_counted(views) or best_evidenced(views)

    def _across_machines(self) -> list[nodes.Node]:
        """Each machine's best-evidenced counted run side by side, where more than one machine counted."""
        latest = []
        for group in self.machine_runs():
            counted = latest_counted(group.views)
            if counted is not None:
                latest.append((group.label, counted))
        if len(latest) < 2:
            return []
        keys = list(dict.fromkeys((c.subject, c.cell) for _, v in latest for c in v.run.counting.counts))  # type: ignore[union-attr]
        rows = []
        for subject, cell in keys:
            row: list[str | nodes.Node] = [f"{subject} {cell}"]
            for _, view in latest:
                found = view.run.counting.of(subject, cell) if view.run.counting else None
                row.append(_count(found.per_request if found else None))
            rows.append(row)
        return [
            nodes.paragraph(
                text="The same counts on every machine that made them (the best-evidenced counted run of each):"
            ),
            table(["Subject, cell", *(label for label, _ in latest)], rows),
        ]


class BenchCpuSplit(BenchDirective):
    """Where each server's CPU per request goes in the chosen cells: its own code (user), the kernel, and
    beside it the load tool's own CPU per request; a chart and its table."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "cells": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        view = self.load_view()
        run = view.run
        cells = selected(self.options.get("cells"), run.cell_names, "cells", run.run_file)
        splits = cpu_splits(view, cells)
        if not splits:
            return [nodes.paragraph(text=f"Run {run.run_id} did not record the kernel's part of the server's CPU.")]
        many_cells = len(cells) > 1
        categories = tuple(f"{s.label}, {run.cell_label(s.cell)}" if many_cells else s.label for s in splits)
        parts = (
            ("server: own code (user)", tuple(s.user_us for s in splits)),
            ("server: kernel", tuple(s.kernel_us for s in splits)),
            ("load tool", tuple(s.load_us for s in splits)),
        )
        chart = Chart(
            kind="stack",
            title=f"CPU per request, run {run.run_id}",
            x_label="subject" if not many_cells else "subject, load setting",
            y_label="median CPU per request (µs): the server's own code, the kernel, the load tool",
            categories=categories,
            series=tuple(
                Series(label, values, values, values, colour=index) for index, (label, values) in enumerate(parts)
            ),
            values_in="the table below it",
        )
        rows = [
            [category, _count(s.user_us), _count(s.kernel_us), _count(s.server_us), _count(s.load_us)]
            for category, s in zip(categories, splits, strict=True)
        ]
        headers = ("Subject", "Server user µs/req", "Server kernel µs/req", "Server CPU µs/req", "Load tool µs/req")
        caption = nodes.paragraph(
            text="The server's median CPU per request, split by the kernel's share of its CPU summed over the "
            "cell's repetitions (clock ticks of 10 ms, fine over the total), beside the load tool's own CPU."
        )
        listing = bench_details(summary="The same figures as a table")
        listing += table(headers, rows)
        return [chart_node(chart, "µs"), caption, listing]


class BenchFlame(BenchDirective):
    """Each Python server's py-spy flame graph (shown, and linked at full size) and the ten functions most
    often innermost in its samples, from the reference machine's best-evidenced run that recorded them."""

    def render(self) -> list[nodes.Node]:
        views = [self.load_view()] if self.options.get("run") else list(self.machine_runs()[0].views)
        recorded = [view for view in views if flames_of(view.run.path)]
        if not recorded:
            return [nodes.paragraph(text="No run of this page recorded flame graphs yet (the conf's [flame] table).")]
        view = best_evidenced(recorded)
        labels = view.run.subject_labels
        out: list[nodes.Node] = [
            nodes.paragraph(
                text=f"Sampled by py-spy ({SAMPLE_RATE} samples a second of the thread holding Python's lock, the "
                "server not paused) in run "
                f"{view.run.run_id} after its timed rounds, under a load window of each cell's own command. "
                "Width is the share of samples a function was on the stack; the table counts where a sample "
                "was innermost."
            )
        ]
        page_dir = Path(self.env.doc2path(self.env.docname)).parent
        for flame in flames_of(view.run.path):
            title = f"{labels.get(flame.subject, flame.subject)}, {view.run.cell_label(flame.cell)}"
            out.append(nodes.rubric(text=title))
            if flame.note:
                out.append(nodes.paragraph(text=flame.note))
            if flame.svg is not None:
                self.note(flame.svg)
                out.append(nodes.image(uri=os.path.relpath(flame.svg, page_dir), alt=f"flame graph of {title}"))
            if flame.stacks is not None:
                self.note(flame.stacks)
                total, top = top_functions(flame.stacks.read_text(errors="replace"))
                rows = [[share.function, f"{100 * share.share:.1f} %"] for share in top]
                out.append(table((f"Innermost function ({total:,} samples)", "Share of samples"), rows))
        return out
