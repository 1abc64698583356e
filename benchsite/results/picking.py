"""Which server to pick for a kind of client: the servers in front in the cell that measured that kind of client,
with their memory at its peak and, where the run's open-loop load measured that same kind of client, their p99
latency at half their capacity, all from one run.

The kind of client is said from the cell itself (how many clients at once, whether they keep their connections
open, the protocol the tool's own output reports), never from a page's words. A server whose figure is not the
server's own is kept out of the pick and named with the cause: one that closes every connection in a keep-alive
cell measured new connections, not keep-alive; one that failed requests is not a pick. Where the servers in front
all reached the load tool's limit, req/s cannot tell them apart: server CPU per request decides between them, as
the pages' ranking says.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from benchsite.results.latency import LoadFigure, fmt_ms, latency_figures
from benchsite.results.memory import MIB, memory_figures
from benchsite.results.metrics import METRICS
from benchsite.results.ranking import Ranked, ranked
from benchsite.results.view import RunView

HALF = 0.5  # the load a pick's latency is read at: half the server's own capacity
TAIL_GROWTH = 3.0  # a pick's p99 this many times the others' median is said as its cost
SERVER_CPU = METRICS["server-cpu"]


@dataclass(frozen=True)
class Candidate:
    """One server in front for a kind of client."""

    subject: str
    label: str
    rps: float
    tool_limited: bool  # the load tool, not the server, set the figure: at least this fast
    surely_ahead: bool | None  # surely ahead of the next candidate by the deciding figure (None: the last)
    cpu_us: float | None  # its median server CPU per request in the cell, µs
    p99_half_ms: float | None  # None: not measured for this kind of client, or the load tool fell behind
    p99_said: str  # "1.2 ms", "out of the load tool's reach", "not measured for this kind of client"
    offered_rps: float | None  # the open-loop load its p99 was measured at (half its capacity)
    peak_mib: float | None


@dataclass(frozen=True)
class Pick:
    """The servers in front in one cell, by the figure that decides there, and those left out with the cause."""

    kind: str  # "10 clients at once, a new connection per request": said from the cell
    cell: str
    candidates: tuple[Candidate, ...]
    left_out: tuple[str, ...]  # "uWSGI (closes every connection)"
    by_cpu: bool = False  # the servers in front reached the load tool's limit: CPU per request decided
    at_limit: int = 0  # how many servers reached it


def client_kind(view: RunView, cell: str) -> str:
    """The kind of client a cell measured, from its own record: "one client at a time, a new connection per
    request", "10 clients at once, each keeping its connection open", "… over HTTP/2" only where the tool's
    output reports h2."""
    record = next((found for s in view.run.subjects if (found := s.cell(cell)) is not None), None)
    if record is None:
        return cell
    count = record.concurrency
    clients = "one client at a time" if count == 1 else f"{count:,} clients at once"
    connections = "each keeping its connection open" if record.keepalive else "a new connection per request"
    return f"{clients}, {connections}{' over HTTP/2' if spoke_h2(view, cell) else ''}"


def spoke_h2(view: RunView, cell: str) -> bool:
    """Whether every counted repetition of the cell reports HTTP/2 as its application protocol (h2load's
    "Application protocol: h2"); ab and wrk speak HTTP/1.x only."""
    protocols = {
        getattr(rep.result, "application_protocol", None)
        for subject in view.run.subjects
        if (record := subject.cell(cell)) is not None
        for rep in record.repetitions
        if rep.ok and rep.result is not None
    }
    return protocols == {"h2"}


def half_load_of(view: RunView, cell: str) -> dict[str, LoadFigure]:
    """Each server's open-loop figure at half its capacity, where the run's latency profile measured the kind of
    client this cell measures (this is its capacity cell, and its load keeps connections as the cell does); else
    none."""
    run = view.run
    plan = run.latency.plan if run.latency is not None else None
    record = next((each for s in run.subjects if (each := s.cell(cell)) is not None), None)
    if plan is None or record is None or plan.capacity_cell != cell or plan.keepalive != record.keepalive:
        return {}
    halves: dict[str, LoadFigure] = {}
    for figure in latency_figures(run):
        half = next((load for load in figure.loads if load.fraction == HALF), None)
        if half is not None:
            halves[figure.subject] = half
    return halves


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


def _p99(half: LoadFigure | None, measured_here: bool) -> tuple[float | None, str]:
    """A server's p99 at half load and how it is said."""
    if half is None:
        return None, "not measured" if measured_here else "not measured for this kind of client"
    witness = half.witness_ms.get(99.0)
    p99 = half.p(99.0)
    if not half.tool_limited and p99 is not None:
        if half.apart and witness is not None:  # neither shown right: both said, and it decides nothing
            return None, f"{fmt_ms(p99)} (its witness {fmt_ms(witness.value)}: apart)"
        return p99, fmt_ms(p99)
    if witness is not None:  # the tool's figure is its own: the witness's is the server's
        return None, f"{fmt_ms(witness.value)} (witness)"
    return None, "out of the load tool's reach"


def _cpu_us(view: RunView, subject: str, cell: str) -> float | None:
    found = view.figure(subject, cell)
    return found.summary.median(SERVER_CPU) if found is not None else None


def _cheaper(view: RunView, subject: str, other: str, cell: str) -> bool:
    """Whether the paired rounds put `subject`'s server CPU per request surely below `other`'s."""
    ratio = view.ratio((subject, cell), (other, cell), SERVER_CPU, usable_only=False)
    return ratio is not None and ratio.high is not None and ratio.high < 1


def pick(view: RunView, cell: str, shown: int = 3) -> Pick:
    """The first `shown` servers of the cell that measured the server itself, with memory and latency; where the
    first of them reached the load tool's limit, those at the limit ordered by CPU per request."""
    run = view.run
    ceiling = run.ceiling.name if run.ceiling is not None else None
    halves = half_load_of(view, cell)
    peaks = {figure.subject: figure.peak for figure in memory_figures(run)}
    left_out = []
    places: list[Ranked] = []
    for place in ranked(view, cell):
        if place.busy or place.subject == ceiling:
            continue
        if _closes_every_connection(view, place.subject, cell):
            left_out.append(f"{place.label} (closes every connection: it measured new connections here)")
        elif _failed(view, place.subject, cell):
            left_out.append(f"{place.label} (failed requests)")
        else:
            places.append(place)
    limited = [place for place in places if place.tool_limited]
    by_cpu = bool(places) and places[0].tool_limited and len(limited) > 1
    if by_cpu:  # req/s cannot tell those at the tool's limit apart: the cheapest per request first
        costs = {place.subject: _cpu_us(view, place.subject, cell) for place in limited}
        places = sorted(limited, key=lambda place: (costs[place.subject] is None, costs[place.subject] or 0.0))
    candidates = []
    for index, place in enumerate(places[:shown]):
        following = places[index + 1] if index + 1 < len(places) else None
        if following is None:
            ahead = None
        elif by_cpu:
            ahead = _cheaper(view, place.subject, following.subject, cell)
        else:
            ahead = place.ahead_of_next
        half = halves.get(place.subject)
        p99, said = _p99(half, bool(halves))
        peak = peaks.get(place.subject)
        candidates.append(
            Candidate(
                subject=place.subject,
                label=place.label,
                rps=place.median,
                tool_limited=place.tool_limited,
                surely_ahead=ahead,
                cpu_us=_cpu_us(view, place.subject, cell),
                p99_half_ms=p99,
                p99_said=said,
                offered_rps=half.offered_rps if half is not None else None,
                peak_mib=None if peak is None else peak.uss_bytes / MIB,
            )
        )
    return Pick(
        kind=client_kind(view, cell),
        cell=cell,
        candidates=tuple(candidates),
        left_out=tuple(left_out),
        by_cpu=by_cpu,
        at_limit=len(limited),
    )


def pick_said(found: Pick, costs: dict[str, str]) -> str:
    """One sentence that picks, with the figures of each server picked and what picking it costs: "For 10 clients
    at once, each keeping its connection open: FastWSGI (114,184 req/s, 17.4 MiB at peak), a C extension on
    libuv." A p99 is said only where it was measured for this kind of client, with the load it was offered.
    `costs` holds the page's own words on a server (by subject)."""
    first = found.candidates[:1]
    if not first:
        return f"For {found.kind}: no server measured the server itself here."
    chosen = list(first)
    if first[0].surely_ahead is False and len(found.candidates) > 1:  # not told apart from the next one
        chosen.append(found.candidates[1])
    others = [c.p99_half_ms for c in found.candidates if c.p99_half_ms is not None]
    named = []
    for candidate in chosen:
        if found.by_cpu:
            cpu = "CPU not measured" if candidate.cpu_us is None else f"{candidate.cpu_us:,.0f} µs of CPU a request"
            figures = f"{cpu}, at least {candidate.rps:,.0f} req/s"
        else:
            figures = f"{'at least ' if candidate.tool_limited else ''}{candidate.rps:,.0f} req/s"
        if candidate.peak_mib is not None:
            figures += f", {candidate.peak_mib:,.1f} MiB at peak"
        if candidate.offered_rps is not None:
            figures += f", p99 {candidate.p99_said} at half that ({candidate.offered_rps:,.0f} req/s)"
        costs_said = [costs[candidate.subject]] if candidate.subject in costs else []
        rest = [value for value in others if value != candidate.p99_half_ms]
        if candidate.p99_half_ms is not None and rest and candidate.p99_half_ms > TAIL_GROWTH * statistics.median(rest):
            costs_said.append(
                f"its p99 at half load {candidate.p99_half_ms / statistics.median(rest):.1f}× the others'"
            )
        cost = f": {'; '.join(costs_said)}" if costs_said else ""
        named.append(f"{candidate.label} ({figures}){cost}")
    apart = " (not told apart)" if len(chosen) > 1 else ""
    if found.by_cpu:
        return (
            f"For {found.kind}, {found.at_limit} servers at the load tool's limit, so the least CPU a request "
            f"decides among them{apart}: " + "; or ".join(named) + "."
        )
    return f"For {found.kind}{apart}: " + "; or ".join(named) + "."
