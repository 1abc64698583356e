"""``.. bench-latency::``: latency at a given load, open loop, from the page's run (its reference machine's, which
every section reads): each server offered shares of its capacity, its percentiles at each, beside its witness's."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.results.intervals import levels_label
from benchsite.results.latency import (
    SHOWN,
    LatencyFigures,
    LoadFigure,
    fmt_ms,
    latency_figures,
    queue_said,
    tails_apart,
)
from benchsite.sphinxext.base import BenchDirective
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.measured import MeasuredDirective, pending_xref_to
from benchsite.sphinxext.nodes import bench_details, block, data
from benchsite.sphinxext.tables import table


def _flag(load: LoadFigure, percentile: float) -> str:
    """What marks a load that decides nothing, with the witness's figure where it measured this percentile:
    " (tool behind; witness 0.89 ms)"; where the tool and its witness depart, " (apart: witness 0.89 ms)" at the
    witness's percentiles alone."""
    witness = load.witness_ms.get(percentile)
    if load.tool_limited:
        return f" (tool behind; witness {fmt_ms(witness.value)})" if witness is not None else " (tool behind)"
    if load.apart and witness is not None:
        return f" (apart: witness {fmt_ms(witness.value)})"
    return ""


def _plain(load: LoadFigure, percentile: float) -> str:
    """The median alone, for the summary (every interval is in the table of every load)."""
    value = load.p(percentile)
    return (_bounded(load, percentile) if value is None else fmt_ms(value)) + _flag(load, percentile)


def _bounded(load: LoadFigure, percentile: float) -> str:
    """What a load without a figure bounds: "≥ 1.20 ms" (the tool behind), "≤ 3.10 ms (busy)", or "—"."""
    bound = load.bound_ms.get(percentile)
    if bound is None:
        return "—"
    return f"≥ {fmt_ms(bound)}" if load.bound_side == "at least" else f"≤ {fmt_ms(bound)} (busy)"


def _bounds_glossed(figures: list[LatencyFigures]) -> str:
    """What the one-sided figures the section shows mean (nothing where it shows none)."""
    sides = {load.bound_side for figure in figures for load in figure.loads}
    said = ""
    if "at most" in sides:
        said += "“≤ … (busy)”: others took the CPUs in every round, so the server's own figure is at most that. "
    if "at least" in sides:
        said += (
            "“≥ …”: the tool fell behind, and this is what the server surely took (its figure less the tool's lag). "
        )
    return said


def _at(load: LoadFigure, percentile: float) -> str:
    found = load.latency_ms.get(percentile)
    if found is None:
        return _bounded(load, percentile) + _flag(load, percentile)
    text = fmt_ms(found.value)
    if found.low is not None and found.high is not None and found.count > 1:
        text += f" [{fmt_ms(found.low)}–{fmt_ms(found.high)}]"
    return text + _flag(load, percentile)


def _share(fraction: float) -> str:
    return f"{round(100 * fraction)} %"


class BenchLatency(MeasuredDirective):
    """Each server's latency at shares of its capacity: a summary table, the hockey-stick chart, every figure;
    ``:brief:`` opens the summary table only on demand (a page with many servers: the card's pick quotes them)."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "brief": directives.flag}

    def render(self) -> list[nodes.Node]:
        view = self.page_run_with("latency")
        if view is None:
            return self.not_in_page_run("latency at a given load")
        run = view.run
        figures = latency_figures(run)
        assert run.latency is not None
        plan = run.latency.plan
        connections = "kept-alive connections" if plan.keepalive else "new connections"
        lead = nodes.paragraph()
        lead += nodes.Text(
            f"Each server offered {', '.join(_share(f) for f in plan.fractions)} of its capacity (median req/s at "
            f"{run.cell_label(plan.capacity_cell)}) steadily, {connections}, {plan.rounds} rounds of "
            f"{plan.seconds:g} s; p99 timed from each request's due time. "
            f"Sustained: p99 under {plan.p99_target}. {_bounds_glossed(figures)}“Tool behind”: the tool lagged"
            + (
                "; “apart”: it and its witness, a second sender, disagree: neither decides ("
                if plan.witness_rps
                else " ("
            )
        )
        lead += pending_xref_to("open-loop", "how")
        lead += nodes.Text(").")
        drawn = any(load.p(99.0) is not None for figure in figures for load in figure.loads)
        if drawn:
            chart = bench_details(summary="The chart: each server's p99 as the offered load grows")
            chart += self._chart(figures)
        else:
            chart = nodes.paragraph(text="No load of this run measured a p99: no chart.")
        apart = [data(nodes.paragraph(text=said), tail="apart", recipe=self.recipe) for said in tails_apart(figures)]
        apart += [data(nodes.paragraph(text=said), tail="queue", recipe=self.recipe) for said in queue_said(figures)]
        summary = self._summary(figures, run.run_id)
        if "brief" in self.options:
            opened = bench_details(summary="Each server: its capacity, its p99 at half and at the highest load")
            opened += summary
            summary = opened
        return [lead, *apart, summary, chart, self._every_load(figures, run.run_id)]

    def _summary(self, figures: list[LatencyFigures], run_id: str) -> nodes.Node:
        middle = [0.5] if any(load.fraction == 0.5 for f in figures for load in f.loads) else []
        heads = (
            "Server",
            "Capacity (closed loop)",
            *(f"p99 at {_share(s)}" for s in middle),
            f"p99 at {_share(figures[0].loads[-1].fraction)}" if figures else "p99 at the highest load",
            "Sustained up to",
        )
        rows = []
        for figure in figures:
            by_share = {load.fraction: load for load in figure.loads}
            top = figure.loads[-1]
            tag = {"recipe": self.recipe, "subject": figure.subject, "run": run_id}
            rows.append(
                [
                    figure.label,
                    data(f"{figure.capacity_rps:,.0f} req/s", metric="capacity", **tag),
                    *(data(_plain(by_share[s], 99.0), metric="p99", share=_share(s), **tag) for s in middle),
                    data(_plain(top, 99.0), metric="p99", share=_share(top.fraction), **tag),
                    data(_sustained(figure), metric="sustained", **tag),
                ]
            )
        return block(table(heads, rows, classes=["bench-latency"]), table="latency", recipe=self.recipe)

    def _chart(self, figures: list[LatencyFigures]) -> nodes.Node:
        shares = tuple(_share(load.fraction) for load in figures[0].loads) if figures else ()
        series = tuple(
            Series(
                label=figure.label,
                medians=tuple(load.p(99.0) for load in figure.loads),
                lows=tuple(_bound(load, low=True) for load in figure.loads),
                highs=tuple(_bound(load, low=False) for load in figure.loads),
                flagged=tuple(load.tool_limited for load in figure.loads),
                colour=index,
                absent=tuple(load.p(99.0) is None for load in figure.loads),  # nothing to draw: no zero on a log axis
            )
            for index, figure in enumerate(figures)
        )
        chart = Chart(
            kind="line",
            title="p99 latency against offered load (open loop)",
            x_label="offered load, share of each server's own capacity",
            y_label="p99 latency (ms, log scale)",
            categories=shares,
            series=series,
            values_in="the table of every load below",
            log_scale=True,
        )
        return chart_node(chart, "ms")

    def _every_load(self, figures: list[LatencyFigures], run_id: str) -> nodes.Node:
        witnessed = any(load.witness_ms for figure in figures for load in figure.loads)
        heads = (
            "Server",
            "Offered",
            *(f"p{p:g}" for p in SHOWN),
            *(["Witness p50 / p99", "Listen overflows"] if witnessed else []),
            "Rounds",
            "Failed requests",
            "Sustained",
        )
        rows = []
        intervals = []
        for figure in figures:
            for load in figure.loads:
                intervals += [load.latency_ms.get(p) for p in SHOWN]
                sustained = figure.sustained(load)
                rows.append(
                    [
                        figure.label,
                        f"{_share(load.fraction)}: {load.offered_rps:,.0f} req/s",
                        *(data(_at(load, p), metric=f"p{p:g}", subject=figure.subject, run=run_id) for p in SHOWN),
                        *(_witness_cells(load) if witnessed else []),
                        f"{load.counted} of {load.made}",
                        str(load.failed_requests),
                        "—" if sustained is None else "yes" if sustained else "no",
                    ]
                )
        details = bench_details(summary="Every load: p50, p90, p99 and p99.9 with their intervals over rounds")
        details += nodes.paragraph(
            text=f"Each figure is the median over the rounds of that round's own percentile, with its interval "
            f"[{levels_label(intervals)}, min–max where there are few rounds]."
        )
        details += table(heads, rows, classes=["bench-latency-loads"])
        return details


def _witness_cells(load: LoadFigure) -> list[str]:
    """The witness's p50 / p99 at a load, and the machine's listen-queue overflows over its rounds."""
    said = [fmt_ms(found.value) if (found := load.witness_ms.get(p)) is not None else "—" for p in (50.0, 99.0)]
    overflows = "—" if load.listen_overflows is None else f"{load.listen_overflows:,}"
    return [" / ".join(said), overflows]


def _sustained(figure: LatencyFigures) -> str:
    """The highest load sustained, "at least" where the load tool, not the server, fell behind above it."""
    best = figure.sustainable
    if best is None:
        return (
            "the load tool fell behind at the lowest load" if figure.tool_limited_first else "not even the lowest load"
        )
    said = f"{best.offered_rps:,.0f} req/s ({_share(best.fraction)})"
    return f"≥ {said}, the tool's limit" if figure.tool_limited_first else said


def _bound(load: LoadFigure, low: bool) -> float | None:
    found = load.latency_ms.get(99.0)
    if found is None:
        return None
    return found.low if low else found.high
