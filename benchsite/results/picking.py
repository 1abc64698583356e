"""Which server to pick for a kind of client: the servers in front by throughput in the cell that stands for it,
with their p99 latency at half their capacity and their memory at its peak, all from one run.

A server whose figure is not the server's own is kept out of the pick and named with the cause: one that closes
every connection in a keep-alive cell measured new connections, not keep-alive; one that failed requests is not a
pick. A figure the load tool held back stays in, marked: the server is at least that fast.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from benchsite.results.latency import fmt_ms, latency_figures
from benchsite.results.memory import MIB, memory_figures
from benchsite.results.ranking import ranked
from benchsite.results.view import RunView

HALF = 0.5  # the load a pick's latency is read at: half the server's own capacity
TAIL_GROWTH = 3.0  # a pick's p99 this many times the others' median is said as its cost


@dataclass(frozen=True)
class Candidate:
    """One server in front for a kind of client."""

    subject: str
    label: str
    rps: float
    tool_limited: bool  # the load tool, not the server, set the figure: at least this fast
    surely_ahead: bool | None  # surely ahead of the next candidate (None: the last)
    p99_half_ms: float | None  # None: not measured, or the load tool fell behind
    p99_said: str  # "1.2 ms", "out of the load tool's reach", "not measured"
    peak_mib: float | None


@dataclass(frozen=True)
class Pick:
    """The servers in front in one cell, and those left out with the cause."""

    kind: str  # "keep-alive clients"
    cell: str
    candidates: tuple[Candidate, ...]
    left_out: tuple[str, ...]  # "uWSGI (closes every connection)"


def _closes_every_connection(view: RunView, subject: str, cell: str) -> bool:
    record = view.run.subject(subject)
    found = record.cell(cell) if record else None
    if found is None or not found.keepalive:
        return False
    seen = {rep.result.keepalive_honoured for rep in found.repetitions if rep.ok and rep.result is not None}
    return seen == {False}


def _failed(view: RunView, subject: str, cell: str) -> bool:
    found = view.figure(subject, cell)
    return found is not None and bool(found.summary.problems)


def pick(view: RunView, kind: str, cell: str, shown: int = 3) -> Pick:
    """The first `shown` servers of the cell that measured the server itself, with latency and memory."""
    run = view.run
    ceiling = run.ceiling.name if run.ceiling is not None else None
    halves = {
        figure.subject: next((load for load in figure.loads if load.fraction == HALF), None)
        for figure in latency_figures(run)
    }
    peaks = {figure.subject: figure.peak for figure in memory_figures(run)}
    candidates: list[Candidate] = []
    left_out = []
    places = [place for place in ranked(view, cell) if not place.busy and place.subject != ceiling]
    for index, place in enumerate(places):
        if _closes_every_connection(view, place.subject, cell):
            left_out.append(f"{place.label} (closes every connection: it measured new connections here)")
            continue
        if _failed(view, place.subject, cell):
            left_out.append(f"{place.label} (failed requests)")
            continue
        if len(candidates) == shown:
            break
        half = halves.get(place.subject)
        p99 = None if half is None or half.tool_limited else half.p(99.0)
        witness = half.witness_ms.get(99.0) if half is not None and half.tool_limited else None
        if p99 is not None:
            said = fmt_ms(p99)
        elif witness is not None:  # the tool's figure is its own: the witness's is the server's
            said = f"{fmt_ms(witness.value)} (witness)"
        else:
            said = "out of the load tool's reach" if half is not None and half.tool_limited else "not measured"
        peak = peaks.get(place.subject)
        candidates.append(
            Candidate(
                subject=place.subject,
                label=place.label,
                rps=place.median,
                tool_limited=place.tool_limited,
                surely_ahead=place.ahead_of_next if index + 1 < len(places) else None,
                p99_half_ms=p99,
                p99_said=said,
                peak_mib=None if peak is None else peak.uss_bytes / MIB,
            )
        )
    return Pick(kind, cell, tuple(candidates), tuple(left_out))


def pick_said(found: Pick, costs: dict[str, str]) -> str:
    """One sentence that picks, with the three figures of each server picked and what picking it costs: "For
    keep-alive clients: FastWSGI (163,719 req/s, p99 at half load — (tool behind), 17.5 MiB at peak), a C
    extension on libuv." `costs` holds the page's own words on a server (by subject)."""
    first = found.candidates[:1]
    if not first:
        return f"For {found.kind}: no server measured the server itself here."
    chosen = list(first)
    if first[0].surely_ahead is False and len(found.candidates) > 1:  # not told apart from the next one
        chosen.append(found.candidates[1])
    others = [c.p99_half_ms for c in found.candidates if c.p99_half_ms is not None]
    named = []
    for candidate in chosen:
        rps = f"{'at least ' if candidate.tool_limited else ''}{candidate.rps:,.0f} req/s"
        memory = "" if candidate.peak_mib is None else f", {candidate.peak_mib:,.1f} MiB at peak"
        costs_said = [costs[candidate.subject]] if candidate.subject in costs else []
        rest = [value for value in others if value != candidate.p99_half_ms]
        if candidate.p99_half_ms is not None and rest and candidate.p99_half_ms > TAIL_GROWTH * statistics.median(rest):
            costs_said.append(
                f"its p99 at half load {candidate.p99_half_ms / statistics.median(rest):.1f}× the others'"
            )
        cost = f": {'; '.join(costs_said)}" if costs_said else ""
        named.append(f"{candidate.label} ({rps}{memory}, p99 at half load {candidate.p99_said}){cost}")
    apart = " (not told apart)" if len(chosen) > 1 else ""
    return f"For {found.kind}{apart}: " + "; or ".join(named) + "."
