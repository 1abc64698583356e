"""What a server page's sections read besides req/s, from the page's run: the directive base of the latency and
memory sections, and the sentence that sets both numbers beside speed (the page's answer quotes it)."""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes

from benchsite.results.latency import fmt_ms, latency_figures
from benchsite.results.machines import MachineRuns, measured
from benchsite.results.memory import MIB, memory_figures
from benchsite.results.view import RunView
from benchsite.sphinxext.base import BenchDirective


def page_run_with(groups: list[MachineRuns], wanted: str) -> RunView | None:
    """The page's run (its reference machine's, read by every section) if it recorded `wanted`."""
    view = groups[0].main
    return view if measured(view, wanted) else None


def newest_with(groups: list[MachineRuns], wanted: str) -> RunView | None:
    """The newest run that recorded `wanted` ("latency" or "memory"): the reference machine's, else the next's."""
    for machine in groups:
        found = [view for view in machine.views if measured(view, wanted)]
        if found:
            return max(found, key=lambda each: each.run.started_at)
    return None


def beside_speed(view: RunView) -> str:
    """One sentence: the range of the servers' p99 at half their capacity (loads the tool held), and of their
    memory at its peak, each end named."""
    run = view.run
    halves = [
        (half.p(99.0), figure.label)
        for figure in latency_figures(run)
        if (half := next((load for load in figure.loads if load.fraction == 0.5), None)) is not None
        and not half.tool_limited
        and not half.apart
        and half.p(99.0) is not None
    ]
    held = memory_figures(run)
    peaks = [(figure.peak.uss_bytes, figure.label) for figure in held if figure.peak is not None]
    apart = [
        f"{figure.label} {_mib(figure.idle.uss_bytes)}"
        for figure in held
        if figure.peak is None and figure.idle is not None and run.subject(figure.subject).role == "backend"  # type: ignore[union-attr]
    ]
    left_out = sum(
        1 for figure in latency_figures(run) for load in figure.loads if load.fraction == 0.5 and load.tool_limited
    )
    said = []
    if halves:
        low, high = min(halves), max(halves)
        span = (
            f"from {fmt_ms(low[0])} ({low[1]}) to {fmt_ms(high[0])} ({high[1]})"
            if len(halves) > 1
            else (f"{fmt_ms(low[0])} ({low[1]})")
        )
        beyond = f", {left_out} server{'s' * (left_out != 1)} too fast for the load tool left out" if left_out else ""
        said.append(f"Offered half its capacity, a server's p99 latency ran {span}{beyond}")
    if peaks:
        low_b, high_b = min(peaks), max(peaks)
        span = (
            f"from {_mib(low_b[0])} ({low_b[1]}) to {_mib(high_b[0])} ({high_b[1]})"
            if len(peaks) > 1
            else (f"{_mib(low_b[0])} ({low_b[1]})")
        )
        said.append(f"{'its' if said else 'Its'} memory at its peak {span}")
    if apart:  # servers that hand requests to a backend hold less than one that runs the app inside itself
        said.append(
            "each server's own processes alone: those that hand requests to a backend leave the app to it, "
            f"counted apart once started: {', '.join(apart)} (add it to compare them with a server that holds "
            "the app)"
        )
    return "; ".join(said) if said else "no latency or memory recorded"


class MeasuredDirective(BenchDirective):
    """A directive showing what the page's run recorded (the reference machine's run every section reads)."""

    def page_run_with(self, wanted: str) -> RunView | None:
        view = page_run_with(self.machine_runs(), wanted)
        if view is not None:
            self.note(view.run.run_file)
        return view

    def newest_with(self, wanted: str) -> RunView | None:
        view = newest_with(self.machine_runs(), wanted)
        if view is not None:
            self.note(view.run.run_file)
        return view

    def not_in_page_run(self, what: str) -> list[nodes.Node]:
        """One line: the page's run did not measure `what`, and what measures it."""
        run = self.machine_runs()[0].main.run
        return [
            nodes.paragraph(
                text=f"The page's run ({run.run_id} on {run.machine.name}) did not measure {what}: "
                f"`.venv/bin/invoke recipe {self.recipe}` measures it."
            )
        ]

    def none_yet(self, what: str) -> list[nodes.Node]:
        return [
            nodes.paragraph(
                text=f"No run of {self.recipe} has measured {what} yet: "
                f"`.venv/bin/invoke recipe {self.recipe}` makes one."
            )
        ]


def _mib(value: int | None) -> str:
    return "—" if value is None else f"{value / MIB:,.1f} MiB"


def pending_xref_to(label: str, text: str) -> nodes.Node:
    """A link to a label elsewhere in the site, resolved by Sphinx."""
    ref = addnodes.pending_xref("", refdomain="std", reftype="ref", reftarget=label, refexplicit=True)
    ref += nodes.inline(text=text)
    return ref
