"""``.. bench-paced-ceiling:: RECIPE``: the open-loop tool's ceiling, load by load against the recipe's ceiling
subject (nginx on a static file), the tool's figures beside its witness's: where the tool held its schedule, where
it fell behind, where its figures left the witness's."""

from __future__ import annotations

import statistics
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.model.run import RunDocument
from benchsite.results.intervals import Interval
from benchsite.results.latency import WITNESSED, LatencyFigures, LoadFigure, fmt_ms, latency_figures
from benchsite.results.view import RunView
from benchsite.sphinxext.base import BenchDirective
from benchsite.sphinxext.measured import MeasuredDirective
from benchsite.sphinxext.nodes import block
from benchsite.sphinxext.tables import table
from benchsite.tools.base import Repetition
from benchsite.tools.paced import PacedResult


class BenchPacedCeiling(MeasuredDirective):
    """``.. bench-paced-ceiling:: RECIPE``: how fast benchsite-paced held its schedule, load by load, beside its
    witness: against every server of the runs ``:runs:`` names (the recipe's ceiling profiles), else against the
    ceiling subject (a C server on a static file) of the newest run that measured latency."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "runs": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        named = self.options.get("runs", "").split()
        shown: list[nodes.Node] = []
        if named:
            for run_id in named:
                run = self._named(run_id).run
                shown += self._one(run, latency_figures(run))
            return shown
        view = self.newest_with("latency")
        ceiling = view.run.ceiling if view is not None else None
        figures = [f for f in latency_figures(view.run) if ceiling and f.subject == ceiling.name] if view else []
        if view is None or not figures:
            return self.none_yet("the open-loop tool against its ceiling subject")
        return self._one(view.run, figures)

    def _named(self, run_id: str) -> RunView:
        self.options["run"] = run_id
        try:
            return self.load_view()
        finally:
            del self.options["run"]

    def _one(self, run: RunDocument, figures: list[LatencyFigures]) -> list[nodes.Node]:
        rows = [_row(run, figure, load) for figure in figures for load in figure.loads]
        keepalive = run.latency is not None and run.latency.plan.keepalive
        mode = "Kept-alive connections" if keepalive else "A new connection per request"
        said = f"{mode}, on {run.machine.name} (run {run.run_id}): "
        said += "; ".join(_held_said(figure) for figure in figures) + "."
        heads = (
            "Server",
            "Offered",
            "Achieved (best round)",
            "Send lag p99 (worst round)",
            "Tool's CPU (worst round)",
            "p50 / p99, the tool",
            "p50 / p99, its witness",
            "Schedule",
        )
        return [
            nodes.paragraph(text=said),
            block(table(heads, rows, classes=["bench-paced-ceiling"]), table="paced-ceiling", recipe=self.recipe),
        ]


def _row(run: RunDocument, figure: LatencyFigures, load: LoadFigure) -> list[str]:
    results = [rep.result for rep in _load_reps(run, figure.subject, load.fraction) if rep.result is not None]
    achieved = max((result.requests_per_s for result in results), default=None)
    lag = max((result.send_lag_us_p99 for result in results), default=None)
    cpu = max((share for result in results if (share := _cpu(result)) is not None), default=None)
    lagged = any(result.tool_limited for result in results)
    schedule = "; ".join(
        said for said, happened in (("fell behind", lagged), ("apart from its witness", load.apart)) if happened
    )
    return [
        figure.label,
        f"{load.offered_rps:,.0f} req/s",
        "—" if achieved is None else f"{achieved:,.0f} req/s",
        "—" if lag is None else f"{lag:,} µs",
        "—" if cpu is None else f"{100 * cpu:.0f} %",
        f"{_median_of(results, 50.0)} / {_median_of(results, 99.0)}",
        " / ".join(_plain_interval(load.witness_ms.get(p)) for p in WITNESSED) if load.witness_ms else "—",
        schedule or "held",
    ]


def _held_said(figure: LatencyFigures) -> str:
    """ "against nginx, the tool held 3 of its 5 loads, the highest 22,155 req/s; not 27,694 req/s"."""
    held = [load for load in figure.loads if not load.tool_limited and not load.apart]
    behind = [load for load in figure.loads if load.tool_limited or load.apart]
    said = f"against {figure.label}, the tool held {len(held)} of its {len(figure.loads)} loads"
    if held:
        said += f", the highest {held[-1].offered_rps:,.0f} req/s"
    if behind:
        said += "; not " + ", ".join(f"{load.offered_rps:,.0f}" for load in behind) + " req/s"
    return said


def _cpu(result: PacedResult) -> float | None:
    """The tool's CPU share (version 2), or its busy share (version 1)."""
    return result.cpu_share if result.cpu_share is not None else result.busy_share


def _median_of(results: list[PacedResult], percentile: float) -> str:
    values = [at / 1000 for result in results if (at := result.latency_at_us(percentile)) is not None]
    return fmt_ms(statistics.median(values)) if values else "—"


def _plain_interval(found: Interval | None) -> str:
    return "—" if found is None else fmt_ms(found.value)


def _load_reps(run: RunDocument, subject: str, fraction: float) -> tuple[Repetition[PacedResult], ...]:
    found = run.latency.of(subject) if run.latency is not None else None
    load = next((each for each in found.loads if each.fraction == fraction), None) if found else None
    return load.cell.repetitions if load is not None else ()
