"""A run's open-loop latency profile, summarised: each server's percentiles at each offered load, with their
intervals over rounds, and the highest offered load it sustained (p99 under the plan's target).

Every figure is a median over the counted repetitions (worked, not disturbed, the tool on schedule) of that
repetition's own percentile; a load at which any repetition saw the tool fall behind is flagged and decides
nothing, as a figure limited by the load tool does elsewhere. So is a load whose figures depart from the
witness's (a second sender measuring the same server meanwhile, on the server's CPU): the tool's p50 or p99
over WITNESS_RATIO times the witness's and WITNESS_GAP_MS beyond it (or the other way round), beyond both
intervals, is the tool's own queue, not the server's time.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from benchsite.model.latency import LatencyPlan, LoadRun
from benchsite.model.run import RunDocument
from benchsite.results.intervals import Interval, median_interval
from benchsite.results.memory import fmt_mib, memory_figures
from benchsite.tools.base import Repetition
from benchsite.tools.paced import PacedResult

SHOWN = (50.0, 90.0, 99.0, 99.9)  # the percentiles a page shows
WITNESSED = (50.0, 99.0)  # the percentiles the witness is compared at
# How far apart the tool's and the witness's intervals may lie: the schedule's own tolerance (LAG_LIMIT_US), over
# what the witness, a Python loop woken on the server's busy CPU, adds to each of its requests (a few hundred µs),
# and a factor for what two samples of one tail differ by (the witness's p99 rests on a few of its requests). A
# tool that queued its own work was off by factors of 5 to 1,000.
WITNESS_GAP_MS = 1.0
WITNESS_RATIO = 2.0


@dataclass(frozen=True)
class LoadFigure:
    """One server at one offered load."""

    fraction: float
    offered_rps: float
    latency_ms: dict[float, Interval | None]  # by percentile: the median over rounds, with its interval
    counted: int  # repetitions it rests on
    made: int  # repetitions made
    tool_limited: bool  # the tool fell behind its schedule in some repetition: its figure is no server's
    failed_requests: int  # errors and timeouts over every repetition
    raw: tuple[str, ...]  # each repetition's raw output, relative to the run
    witness_ms: dict[float, Interval | None]  # the witness's p50 and p99 over the same repetitions (empty: none ran)
    # The tool's figures depart from its witness's. Neither has been shown the right one (an independent open-loop
    # client sided with the tool in 4 such loads and with the witness in 3, 2026-11-28): both are shown, and the
    # load decides nothing.
    apart: bool
    listen_overflows: int | None  # connections the machine's listen queues turned away, over every repetition
    # Where no repetition could give a figure, what its repetitions bound, by percentile (ms): "at least" where the
    # tool fell behind (its figure less its own lag: `PacedResult.at_least_us`), "at most" where others took the
    # CPUs (they can only have slowed the server); empty where there is a figure or nothing to bound.
    bound_ms: dict[float, float] = field(default_factory=dict)
    bound_side: str = ""  # "at least" or "at most"

    def p(self, percentile: float) -> float | None:
        found = self.latency_ms.get(percentile)
        return None if found is None else found.value


@dataclass(frozen=True)
class LatencyFigures:
    """One server's profile."""

    subject: str
    label: str
    capacity_rps: float
    loads: tuple[LoadFigure, ...]
    target_ms: float

    def sustained(self, load: LoadFigure) -> bool | None:
        """Whether its p99 stayed under the target at this load (None: this load cannot say)."""
        p99 = load.p(99.0)
        if p99 is None or load.tool_limited or load.apart or load.failed_requests:
            return None if p99 is None or load.tool_limited or load.apart else False
        return p99 < self.target_ms

    @property
    def sustainable(self) -> LoadFigure | None:
        """The highest offered load it sustained, every lower one sustained too (None: not even the lowest)."""
        best = None
        for load in self.loads:
            if self.sustained(load) is not True:
                break
            best = load
        return best

    @property
    def tool_limited_first(self) -> bool:
        """Whether the sustained range ends where the load tool fell behind, not where the server did."""
        best = self.sustainable
        after = self.loads[self.loads.index(best) + 1 :] if best is not None else self.loads
        return bool(after) and after[0].tool_limited


def _counted(reps: tuple[Repetition[Any], ...]) -> list[PacedResult]:
    return [rep.result for rep in reps if rep.counted and isinstance(rep.result, PacedResult)]


def _medians(results: list[PacedResult], percentiles: tuple[float, ...]) -> dict[float, Interval | None]:
    """Each percentile's median over the results, in ms, with its interval."""
    found: dict[float, Interval | None] = {}
    for percentile in percentiles:
        values = [at / 1000 for result in results if (at := result.latency_at_us(percentile)) is not None]
        found[percentile] = median_interval(values)
    return found


def departs(tool: Interval | None, witness: Interval | None) -> bool:
    """Whether two intervals of one percentile lie apart: one's low end over WITNESS_RATIO times the other's high
    end and WITNESS_GAP_MS beyond it."""
    if tool is None or witness is None:
        return False
    tool_low, tool_high = _ends(tool)
    witness_low, witness_high = _ends(witness)
    return _beyond(tool_low, witness_high) or _beyond(witness_low, tool_high)


def _beyond(low: float, high: float) -> bool:
    return low > WITNESS_RATIO * high and low - high > WITNESS_GAP_MS


def _ends(interval: Interval) -> tuple[float, float]:
    """An interval's ends, or its value at both where it has none (a single repetition)."""
    low = interval.value if interval.low is None else interval.low
    high = interval.value if interval.high is None else interval.high
    return low, high


def load_figure(load: LoadRun) -> LoadFigure:
    """A load's figures from its repetitions."""
    reps = load.cell.repetitions
    results = _counted(reps)
    witnesses = [result.witness for result in results if result.witness is not None]
    witness = _medians(witnesses, WITNESSED) if witnesses else {}
    tool_at = _medians(results, WITNESSED)
    apart = any(departs(tool_at[p], witness[p]) for p in witness)
    kept = [result for result in results if not result.tool_limited]
    latency = _medians(kept, SHOWN)
    side, bound = ("", {}) if kept else _bounded(reps, results)
    overflows = [rep.result.listen_overflows for rep in reps if rep.result is not None]
    return LoadFigure(
        fraction=load.fraction,
        offered_rps=load.cell.rate,
        latency_ms=latency,
        counted=len(kept),
        made=len(reps),
        tool_limited=any(result.tool_limited for result in results),
        failed_requests=sum(rep.result.failed_requests for rep in reps if rep.result is not None),
        raw=tuple(rep.raw_output for rep in reps),
        witness_ms=witness,
        apart=apart,
        listen_overflows=None if not overflows or None in overflows else sum(o for o in overflows if o is not None),
        bound_ms=bound,
        bound_side=side,
    )


def _bounded(reps: tuple[Repetition[Any], ...], counted: list[PacedResult]) -> tuple[str, dict[float, float]]:
    """What a load's repetitions bound where none gives a figure: the median, over the counted ones the tool fell
    behind in, of what the server surely took ("at least"); else over those others disturbed, of their figure
    ("at most": others' work and the tool's lateness only add to a latency counted from its due time)."""
    late = {p: [at / 1000 for r in counted if (at := r.at_least_us(p)) is not None] for p in SHOWN}
    if any(late.values()):
        return "at least", {p: statistics.median(found) for p, found in late.items() if found}
    busy = [r for rep in reps if rep.disturbed and isinstance(r := rep.result, PacedResult)]
    found = {p: [at / 1000 for r in busy if (at := r.latency_at_us(p)) is not None] for p in SHOWN}
    if any(found.values()):
        return "at most", {p: statistics.median(values) for p, values in found.items() if values}
    return "", {}


def latency_figures(run: RunDocument) -> list[LatencyFigures]:
    """Every server of the run's latency profile, in the run's order (empty: the run has none)."""
    profile = run.latency
    if profile is None:
        return []
    plan: LatencyPlan = profile.plan
    labels = {subject.name: subject.label for subject in run.subjects}
    return [
        LatencyFigures(
            subject=each.subject,
            label=labels.get(each.subject, each.subject),
            capacity_rps=each.capacity_rps,
            loads=tuple(load_figure(load) for load in each.loads),
            target_ms=plan.p99_target_ms,
        )
        for each in profile.subjects
    ]


def copies_said(run: RunDocument, pairs: list[tuple[str, str, str]]) -> list[str]:
    """For each (subject, reference copy, other copy): what each copy held in memory once started and at its peak
    (the other over the reference at the peak), then, with a latency profile, each copy's p99 at every load."""
    lines = []
    held = {figure.subject: figure for figure in memory_figures(run)}
    for subject, a, b in pairs:
        kept, other = held.get(a), held.get(b)
        if kept is None or other is None or kept.peak is None or other.peak is None:
            continue
        ratio = other.peak.uss_bytes / kept.peak.uss_bytes if kept.peak.uss_bytes else None
        lines.append(
            f"{subject} memory (USS, workers included): A {fmt_mib(kept.idle)} once started, "
            f"{fmt_mib(kept.peak)} at its peak; B {fmt_mib(other.idle)}, {fmt_mib(other.peak)}"
            + ("" if ratio is None else f" (B ÷ A at the peak: {ratio:.2f}×)")
        )
    figures = {figure.subject: figure for figure in latency_figures(run)}
    for subject, a, b in pairs:
        first, second = figures.get(a), figures.get(b)
        if first is None or second is None:
            continue
        loads = [
            f"{round(100 * x.fraction)} %: A {_ms(x.p(99.0))}, B {_ms(y.p(99.0))}"
            + (" (the tool fell behind)" if x.tool_limited or y.tool_limited else "")
            for x, y in zip(first.loads, second.loads, strict=False)
        ]
        lines.append(f"{subject} p99 latency, open loop, at shares of each side's own capacity: {'; '.join(loads)}")
    return lines


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} ms"


TAIL_APART = 5.0  # a server's p99 this many times the median of the others' at the same share is said apart


def tails_apart(figures: list[LatencyFigures]) -> list[str]:
    """Servers whose p99 at the highest share every server reached is far beyond the others' (TAIL_APART times
    their median), in words: "At 90 % of its capacity, Tornado's p99 is 97.1 ms, 25× the others' median
    (3.9 ms): its tail grows far more under load."."""
    said = []
    shares = sorted({load.fraction for figure in figures for load in figure.loads})
    for share in reversed(shares):
        at = {
            figure.label: load.p(99.0)
            for figure in figures
            for load in figure.loads
            if load.fraction == share and not load.tool_limited and not load.apart and load.p(99.0) is not None
        }
        if len(at) < 3:
            continue
        for label, value in at.items():
            others = statistics.median(v for name, v in at.items() if name != label and v is not None)
            if value is not None and others > 0 and value >= TAIL_APART * others:
                said.append(
                    f"At {round(100 * share)} % of its capacity, {label}'s p99 is {fmt_ms(value)}, "
                    f"{value / others:.0f}× the others' median ({fmt_ms(others)}): its tail grows far more under load."
                )
        return said
    return said


def fmt_ms(ms: float | None) -> str:
    """A latency with the digits that matter: "240 µs", "3.52 ms", "95.7 ms", "1,041 ms"."""
    if ms is None:
        return "—"
    if ms < 1:
        return f"{ms * 1000:.0f} µs"
    return f"{ms:.2f} ms" if ms < 10 else f"{ms:.1f} ms" if ms < 100 else f"{ms:,.0f} ms"


RETRY_MS = 1000.0  # a connection attempt a full listen queue dropped is sent again a second later (TCP's SYN retry)


def queue_said(figures: list[LatencyFigures]) -> list[str]:
    """The servers whose tail is the listen queue's, in one sentence, each at the lowest share where it shows: a
    percentile of a second or more at a load during which the machine's listen queues turned attempts away."""
    found = []
    for figure in figures:
        for load in figure.loads:
            tail = next((p for p in SHOWN if (value := load.p(p)) is not None and value >= 0.9 * RETRY_MS), None)
            if tail is not None and load.listen_overflows and not load.tool_limited:
                found.append(
                    f"{figure.label}'s p{tail:g} at {round(100 * load.fraction)} %, {fmt_ms(load.p(tail))} "
                    f"({load.listen_overflows:,} turned away)"
                )
                break
    if not found:
        return []
    return [
        f"A full listen queue's second (an attempt it turns away is sent again a second later): {'; '.join(found)}."
    ]
