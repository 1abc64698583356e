"""The results table: every subject and cell of the run shown, with medians, intervals, CPU and flags."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from benchsite.model.run import RunDocument
from benchsite.results.figures import FLAG_RULE
from benchsite.results.intervals import Interval, level_label
from benchsite.results.metrics import METRICS, RPS
from benchsite.results.stats import CellSummary
from benchsite.sphinxext.base import BenchDirective, link_to_raw, raw_label, selected
from benchsite.sphinxext.exports import export_links
from benchsite.sphinxext.nodes import block, data
from benchsite.sphinxext.tables import fmt_keepalive, table

SERVER_CPU = METRICS["server-cpu"]
TABLED = tuple(metric for metric in METRICS.values() if metric.tabled)  # a column each, in registry order


class BenchResults(BenchDirective):
    """A table of every subject and cell: median req/s, spread, CPU cost, latency, flags."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "cells": directives.unchanged}
    headers = (
        "Subject",
        "Load",
        RPS.column,
        "Interval [level]",
        "CV req/s / CPU",
        *(metric.column for metric in TABLED),
        "Keep-alive",
        "Status",
    )

    def render(self) -> list[nodes.Node]:
        view = self.load_view()
        run = view.run
        wanted = selected(self.options.get("cells"), run.cell_names, "cells", run.run_file)
        rows: list[list] = []
        warnings: list[str] = []
        for subject in run.subjects:
            label = subject.label + (" (load-tool ceiling)" if subject.role == "ceiling" else "")
            for cell in subject.cells:
                if cell.name not in wanted:
                    continue
                found = view.figure(subject.name, cell.name)
                assert found is not None
                s = found.summary
                warnings += [f"{label}, {cell.label}: {w}" for w in s.noise_warnings(f"conf/{run.recipe}.toml")]

                def tagged(
                    text: str, metric: str, name: str = subject.name, cell_name: str = cell.name, part: str = "median"
                ) -> nodes.Node:
                    return data(text, recipe=run.recipe, subject=name, cell=cell_name, metric=metric, part=part)

                rows.append(
                    [
                        label,
                        cell.label,
                        link_to_raw(
                            RPS.fmt(s.median()),
                            raw_label(run.recipe, subject.name, cell.name),
                            recipe=run.recipe,
                            subject=subject.name,
                            cell=cell.name,
                            metric="rps",
                            part="median",
                        ),
                        tagged(fmt_median_interval(s.interval()), "rps", part="interval"),
                        f"{fmt_cv(s.cv_percent())} / {fmt_cv(s.cv_percent(SERVER_CPU))}",
                        *(tagged(metric.fmt(s.median(metric)), metric.name) for metric in TABLED),
                        fmt_keepalive(s.keepalive_honoured),
                        _status(
                            data(
                                found.status, recipe=run.recipe, subject=subject.name, cell=cell.name, status="figure"
                            ),
                            s,
                        ),
                    ]
                )
        for skipped in run.skipped:
            reason = f"DID NOT RUN: {skipped.reason} ({skipped.said})".replace(" ()", "")
            rows.append(
                [
                    skipped.label,
                    *["—"] * (len(self.headers) - 2),
                    data(reason, recipe=run.recipe, subject=skipped.name, status="skipped"),
                ]
            )
        output: list[nodes.Node] = [
            nodes.paragraph(text=self._caption(run, self.config.bench_profile)),
            block(table(self.headers, rows, classes=["bench-results"]), table="results", recipe=run.recipe),
            export_links(self.env, run),
        ]
        if warnings:
            output.append(nodes.rubric(text=f"Noise warnings ({len(warnings)} cells)"))
            listing = nodes.bullet_list(classes=["bench-noise"])
            for warning in warnings:
                listing += nodes.list_item("", nodes.paragraph(text=warning))
            output.append(listing)
        return output

    @staticmethod
    def _caption(run: RunDocument, published_profile: str) -> str:
        profile = run.profile
        counts = sorted({len(c.repetitions) for s in run.subjects for c in s.cells})
        reps = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
        warmup = (
            f" after a discarded warm-up of {profile.warmup_requests} requests"
            if profile.warmup_requests and run.warmups
            else ""
        )
        return (
            f"Run {run.run_id} ({profile.name} profile{_unpublished(run, published_profile)}): "
            f"{reps} repetition{'s' if reps != '1' else ''} per cell, each {loads_run(run)}{warmup}; "
            "medians over the repetitions with a distribution-free interval at its level (95 % where the "
            "repetitions allow it; with five, the min–max range, which covers the median 93.8 % of the time); "
            "CV = standard deviation / mean, of req/s and of server CPU per request; a repetition disturbed by "
            "other work on the measured CPUs is left out of both (its status says how many); "
            f"{_load_cpu_is(run)} "
            "Each median links to the raw output of the repetition at the median (with an even count, the one "
            "just below it)."
        )


def _status(status: nodes.Node, summary: CellSummary) -> nodes.Node:
    """A figure's status, and how many of its repetitions were disturbed: left out, or counted (--accept-busy)."""
    disturbed = summary.repetitions_disturbed or summary.disturbed_counted
    if not disturbed:
        return status
    fate = "left out" if summary.repetitions_disturbed else "counted (--accept-busy: may be low)"
    said = f"{disturbed} repetition{'s' * (disturbed != 1)} disturbed, {fate}"
    return nodes.paragraph("", "", status, nodes.Text(" · "), nodes.inline(text=said, classes=["bench-disturbed"]))


def _load_cpu_is(run: RunDocument) -> str:
    """Whose CPU the load CPU column is, naming only the tools this run's cells used."""
    tools = sorted({cell.tool for subject in run.subjects for cell in subject.cells})
    tools_named = [tool for tool in tools if tool != "client"]
    parts = []
    if tools_named:
        parts.append(f"the load tool's ({', '.join(tools_named)})")
    if "client" in tools:
        parts.append("the client's own, for a client under test")
    return f"load CPU is {' or '.join(parts)}." if parts else ""


def loads_run(run: RunDocument) -> str:
    """What one repetition of each cell ran, from the stored cell runs: "ab -n 5000 (feed: -n 200), wrk -d 3 s"."""
    by_tool: dict[str, dict[str, str]] = {}
    for subject in run.subjects:
        for cell in subject.cells:
            by_tool.setdefault(cell.tool, {})[cell.name] = cell.amount
    parts = []
    for tool, amounts in by_tool.items():
        common = max(set(amounts.values()), key=list(amounts.values()).count)
        others = ", ".join(f"{name}: {amount}" for name, amount in amounts.items() if amount != common)
        shown = common if tool == "client" else f"{tool} {common}"
        parts.append(shown + (f" ({others})" if others else ""))
    return ", ".join(parts)


def _unpublished(run: RunDocument, published_profile: str) -> str:
    if run.profile.name == published_profile:
        return ""
    return f"; no {published_profile} run of this recipe yet, so the page shows this one, not a published run"


def fmt_cv(percent: float | None) -> str:
    return "—" if percent is None else f"{percent:.1f}%"


def fmt_median_interval(interval: Interval | None) -> str:
    """[1,010–1,060] 93.8 %: the median's interval and its level (the min–max of five covers 93.8 %)."""
    if interval is None or interval.low is None or interval.high is None:
        return "—"
    return f"[{RPS.fmt(interval.low)}–{RPS.fmt(interval.high)}] {level_label(interval.level)}"


class BenchFlagRule(SphinxDirective):
    """The rule a page's tables and charts flag a figure by (limited by the load tool), from its constants."""

    def run(self) -> list[nodes.Node]:
        return [data(nodes.paragraph(text=FLAG_RULE), rule="flag")]
