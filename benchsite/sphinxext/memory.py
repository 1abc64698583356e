"""``.. bench-memory::``: each server's memory summed over its process tree, from the page's run: once it
answered (idle), at its peak under load, and per connection where many were open."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes

from benchsite.results.memory import MIB, memory_figures
from benchsite.sphinxext.base import BenchDirective
from benchsite.sphinxext.measured import MeasuredDirective, pending_xref_to
from benchsite.sphinxext.nodes import block, data
from benchsite.sphinxext.tables import table
from benchsite.tools.memory import MemoryPeak


class BenchMemory(MeasuredDirective):
    """Each server's memory: once started, at its peak under load, and per connection where many were open."""

    option_spec: ClassVar[dict] = dict(BenchDirective.option_spec)

    def render(self) -> list[nodes.Node]:
        view = self.page_run_with("memory")
        if view is None:
            return self.not_in_page_run("memory")
        run = view.run
        figures = memory_figures(run)
        lead = nodes.paragraph()
        lead += nodes.Text(
            "Each server's process tree (workers included, never the load "
            "tool), once it answered (idle) and the highest of all its readings, idle included (peak). USS: the pages "
            "only its processes map; PSS adds their share of the pages they share with others ("
        )
        lead += pending_xref_to("memory-method", "how memory is read")
        lead += nodes.Text(").")
        per_connection = any(figure.per_connection_kib is not None for figure in figures)
        heads: tuple[str, ...] = ("Server", "Idle USS / PSS", "Peak USS / PSS", "Processes", "Peak in")
        heads += ("Per connection",) if per_connection else ()
        rows = []
        for figure in figures:
            tag = {"recipe": self.recipe, "subject": figure.subject, "run": run.run_id}
            idle, peak = figure.idle, figure.peak
            row: list[nodes.Node | str] = [
                figure.label,
                _pair(idle, "idle", tag),
                _pair(peak, "peak", tag),
                str(max(idle.processes if idle else 0, peak.processes if peak else 0)),
                figure.peak_cell or "—",
            ]
            if per_connection:
                kib = figure.per_connection_kib
                row.append(
                    "—"
                    if kib is None
                    else f"{kib:,.1f} KiB (at {figure.connections} clients)"
                    if kib >= 0.05
                    else f"none: no more than idle at {figure.connections} clients"
                )
            rows.append(row)
        return [lead, block(table(heads, rows, classes=["bench-memory"]), table="memory", recipe=self.recipe)]


def _pair(reading: MemoryPeak | None, which: str, tag: dict[str, str]) -> nodes.Node:
    """ "7.9 / 9.7 MiB": USS and PSS of one reading, each tagged with what it is."""
    if reading is None:
        return nodes.inline(text="—")
    pair = nodes.inline()
    pair += data(f"{reading.uss_bytes / MIB:,.1f}", metric=f"{which}-uss", **tag)
    pair += nodes.Text(" / ")
    pair += data(f"{reading.pss_bytes / MIB:,.1f}", metric=f"{which}-pss", **tag)
    pair += nodes.Text(" MiB")
    return pair
