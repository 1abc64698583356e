"""Comparing a reference with others, one rule for "changed" in each currency: an A/B run's B against its A,
a release sweep's releases against the newest and against the one before, each cell of a subject's two copies.

Time: each round measured a subject's copies (A and B) back to back in every cell, so a slow phase of the
machine (a VM's host busy elsewhere, where /proc cannot see it) hits both; B ÷ A is the geometric mean of the
per-round ratios of req/s with a t interval on their logarithms, over the rounds whose two repetitions met
alike interference (both quiet, or both hit about as hard: see `alike`). Others' work only slows what it hits, so
a round in which A met clearly more of it than B can only make B look faster than it is: such rounds, beside the
alike ones, still bound B ÷ A from above, and can call "B slower" (the mirror for "B faster"); on a busy machine
a change too large for the interference to explain is called, never one it could have made (see `leaning`).
Work: the instructions per request each
copy ran under callgrind, batch by batch; B ÷ A from the batches paired by position (see batch_ratio). In each
currency the intervals are simultaneous over the cells compared (Bonferroni), and a change is called where
its interval lies wholly beyond 1.

Where the run started its servers several times (each start with its own hash seed, shared by A and B), the
interval is over the starts: each start's geometric mean of its rounds' (or batches') ratios is one value, so
what a start adds (hash seed, memory layout) is in the interval's spread. A run of one start per side cannot
see that: its change is called only beyond ±1 % (MARGIN), what two starts of unchanged code differed by.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from statistics import geometric_mean, mean
from typing import Any, Literal

from benchsite.results.design import FIXED, ComparisonDesign, design_of
from benchsite.results.intervals import (
    Interval,
    detectable_change,
    ratio_interval,
    simultaneous_level,
)
from benchsite.results.metrics import RPS
from benchsite.results.seeing import could_see, figures_span
from benchsite.results.sequential import within
from benchsite.results.view import RunView
from benchsite.tools.base import Repetition


@dataclass(frozen=True)
class PairedCell:
    """One subject's cell in two copies: B (the other) over A (the reference) in req/s (time) and in instructions
    per request (work)."""

    subject: str  # the subject's own name
    a: str  # its copies' names in the run: the reference
    b: str  # and the one compared with it
    cell: str
    time: Interval | None  # B ÷ A of req/s, from the paired rounds; None: fewer than two rounds
    work: Interval | None  # B ÷ A of instructions per request, from the batches; None: not counted on a side
    # The smallest change each currency would have called here 80 % of the time, from the run's own spread
    # (see `intervals.detectable_change`); None where the run gives no spread.
    time_sees: float | None = None
    work_sees: float | None = None
    # What a change must exceed to be called: where the interval covers several starts, 0 (time) or WORK_NOISE
    # (work); MARGIN where it covers one.
    time_margin: float = 0.0
    work_margin: float = 0.0
    # How the run judged it: fixed, or sequential (its time interval a confidence sequence, valid at every round it
    # was looked at), with the smallest change that matters (see `results.design`).
    design: ComparisonDesign = FIXED
    # Where `time` rests on rounds in which one side met clearly more interference than the other: "at most" (A
    # met more: B ÷ A is at most its interval's high end) or "at least" (B met more); "": rounds met alike.
    time_bound: Bound = ""
    # The ratios B ÷ A the time interval rests on (per round, or per start where the run made several)
    time_ratios: tuple[float, ...] = ()
    # How far the cell's own figures reach (its largest ÷ its smallest, less 1, over both copies: req/s, and
    # instructions per request): no change beyond it is one the run could see (None: no figures).
    time_span: float | None = None
    work_span: float | None = None

    @property
    def time_could_see(self) -> float | None:
        return could_see(self.time_sees, self.time_span)

    @property
    def work_could_see(self) -> float | None:
        return could_see(self.work_sees, self.work_span)

    @property
    def weakest_round(self) -> float | None:
        """Of the ratios a one-sided time change rests on, the one nearest no change: a slowdown called from
        rounds that can only make B look faster is at least this slow in every one of them (None: not a bound)."""
        if not self.time_bound or not self.time_ratios:
            return None
        return max(self.time_ratios) if self.time_bound == "at most" else min(self.time_ratios)

    @property
    def time_changed(self) -> bool:
        if self.time_bound and self.time is not None:
            return one_sided_change(self.time, self.time_bound, self.time_margin)
        return beyond_margin(self.time, self.time_margin)

    @property
    def time_decided(self) -> bool:
        """Time has answered: a change, or none beyond the smallest change that matters."""
        return self.time_changed or (not self.time_bound and within(self.time, self.design.smallest_change))

    @property
    def work_changed(self) -> bool:
        return beyond_margin(self.work, self.work_margin)


# Two processes of the same code differ a little, in time and in work (their hash seeds, where their memory
# lands): the A/A runs of the power benchmark measured up to 0.6 % in req/s and 0.3 % in instructions between
# the A and B copies of one app, each decisive within its run. A change is called where its whole interval
# lies beyond this margin, never for a difference that two starts of unchanged code can make, unless the run
# started its servers several times and so measured that difference itself.
MARGIN = 0.01
# Work counted over several starts still moves with what a new start of the same code does (a path of another
# length, where its memory lands): the A/A sets of the committed power benchmarks (60 runs, 2026-11-26/27) moved
# by up to 0.19 % and were called "changed" in 6 of them with no margin. A change in work is called only beyond
# this; every A/A call goes, and a 0.5 % injected change is still called in 26 of its 30 runs.
WORK_NOISE = 0.002


Bound = Literal["", "at most", "at least"]


def one_sided_change(interval: Interval, bound: Bound, margin: float) -> bool:
    """A change in the one direction a leaning set of rounds can show: B slower where A met more interference
    (the interval's high end below 1 - margin), B faster where B met more (its low end above 1 + margin)."""
    if bound == "at most":
        return interval.high is not None and interval.high < 1 - margin
    return interval.low is not None and interval.low > 1 + margin


def beyond_margin(interval: Interval | None, margin: float = MARGIN) -> bool:
    """The interval of a ratio lies wholly above 1 + margin or below 1 - margin."""
    return bool(
        interval and interval.low and interval.high and (interval.low > 1 + margin or interval.high < 1 - margin)
    )


Pair = tuple[str, str, str]  # (subject, the copy compared with, the other copy)


def comparison_sets(view: RunView) -> list[list[Pair]]:
    """The run's comparisons of copies in the sets whose intervals hold together (`VariantSet.comparison_sets`):
    every subject measured both ways, (subject, the compared-with copy, the other copy), in the run's order."""
    variants = view.run.variants
    if variants is None:
        return []
    order = [subject.name for subject in view.run.subjects]
    found = []
    for compared in variants.comparison_sets():
        pairs = [
            (s, reference.copies[s], other.copies[s])
            for other, reference in compared
            for s in variants.subjects
            if view.run.subject(reference.copies[s]) and view.run.subject(other.copies[s])
        ]
        found.append(sorted(pairs, key=lambda pair: (order.index(pair[1]), order.index(pair[2]))))
    return found


def paired_subjects(view: RunView) -> list[Pair]:
    """(subject, its reference copy, another variant's copy) of every subject measured both ways, in the run's
    order: an A/B run's A and B; a sweep's newest release and each other release (none: no variants)."""
    sets = comparison_sets(view)
    return sets[0] if sets else []


def paired_cells(view: RunView) -> list[PairedCell]:
    """Every cell both sides of an A/B run's subjects ran, in the run's order, with B ÷ A in each currency."""
    return compare_copies(view, paired_subjects(view))


def compare_copies(
    view: RunView, pairs: list[tuple[str, str, str]], cells: Collection[str] | None = None
) -> list[PairedCell]:
    """Each (subject, reference copy, other copy) in every cell both ran (of `cells`, where given): other ÷
    reference in each currency, the intervals simultaneous over every comparison made here, a change called by
    the one rule (`beyond_margin`, the margin a run of one start cannot see)."""
    shared = []
    for subject, a, b in pairs:
        record = view.run.subject(a)
        if record is None:
            continue
        shared += [
            (subject, cell.name, a, b)
            for cell in record.cells
            if (cells is None or cell.name in cells) and view.ran(b, cell.name)
        ]
    time_level = simultaneous_level(len(shared))
    counted = [(a, b, cell) for _, cell, a, b in shared if batches(view, a, cell) and batches(view, b, cell)]
    work_level = simultaneous_level(len(counted))
    found = []
    profile = view.run.profile
    counting = profile.counting
    work_margin = WORK_NOISE if counting and counting.starts > 1 else MARGIN
    design = design_of(profile)
    for subject, cell, a, b in shared:
        alike_ratios, time_margin = per_start(view, alike_rounds(view, a, b, cell))
        time, time_ratios = design.interval(alike_ratios, time_level), alike_ratios
        time_bound: Bound = ""
        called = leaning_change(view, (a, b, cell), time_level, design)
        if called is not None:
            (time, time_bound, time_ratios), time_margin = called
        work, work_ratios = None, []
        if (a, b, cell) in counted and counting:
            counted_a, counted_b = batches(view, a, cell), batches(view, b, cell)
            several = counting.starts > 1
            work_ratios = (
                start_ratios(counted_a, counted_b, counting.batches) if several else batch_ratios(counted_a, counted_b)
            )
            work = ratio_interval(work_ratios, work_level)
        found.append(
            PairedCell(
                subject=subject,
                a=a,
                b=b,
                cell=cell,
                time=time if time and time.bounded else None,
                work=work if work and work.bounded else None,
                time_sees=design.detectable(alike_ratios, time_level, time_margin),
                work_sees=detectable_change(work_ratios, work_level, work_margin),
                time_span=figures_span(rates(view, a, cell) + rates(view, b, cell)),
                work_span=figures_span(batches(view, a, cell) + batches(view, b, cell)),
                time_margin=time_margin,
                work_margin=work_margin,
                design=design,
                time_bound=time_bound,
                time_ratios=tuple(time_ratios),
            )
        )
    return found


def leaning_change(
    view: RunView, compared: tuple[str, str, str], level: float, design: ComparisonDesign
) -> tuple[tuple[Interval, Bound, list[float]], float] | None:
    """A change that the rounds leaning one way, with the alike ones, call in the one direction they can: B slower
    from the rounds in which A met at least as much interference (the bias is against B slower), B faster from
    those in which B did; with the margin a change must clear. None where neither calls one. On a quiet machine
    every round is alike, and this is the alike rounds' two-sided test ("" for its bound). `compared` is (A, B,
    cell); the ratios it rests on come with it."""
    a, b, cell = compared
    alike_keys = alike_rounds(view, a, b, cell).keys()
    directions: tuple[tuple[Bound, str], ...] = (("at most", a), ("at least", b))
    for bound, heavier in directions:
        rounds = leaning(view=view, a=a, b=b, cell=cell, heavier=heavier)
        ratios, margin = per_start(view, rounds)
        found = design.interval(ratios, level)
        if found is not None and found.bounded and one_sided_change(found, bound, margin):
            return (found, bound if rounds.keys() != alike_keys else "", ratios), margin
    return None


def per_start(view: RunView, ratios: dict[int, float]) -> tuple[list[float], float]:
    """Round ratios as the interval takes them, and the margin a change must clear: each start's geometric mean
    and none where the run started its servers several times and at least two starts kept a pair; else the
    rounds' own, and MARGIN (a start's difference unseen)."""
    by_start: dict[int, list[float]] = defaultdict(list)
    for index, ratio in ratios.items():
        by_start[view.run.start_of(index)].append(ratio)
    if len(by_start) < 2:
        return list(ratios.values()), MARGIN
    return [geometric_mean(found) for _, found in sorted(by_start.items())], 0.0


def start_ratios(a: list[float], b: list[float], per_start: int) -> list[float]:
    """B ÷ A of instructions per request start by start, over all the batches of a start (`per_start` of them, in
    order): a full collection of Python's gc, which one side may make a batch later than the other, stays in
    its start's total."""
    return [
        mean(b[first : first + per_start]) / mean(a[first : first + per_start])
        for first in range(0, min(len(a), len(b)), per_start)
    ]


def alike_pairs(view: RunView, a: str, b: str, cell: str) -> list[float]:
    """B ÷ A of req/s of the rounds whose repetitions met alike interference, in round order (see alike_rounds)."""
    return list(alike_rounds(view, a, b, cell).values())


def alike_rounds(view: RunView, a: str, b: str, cell: str) -> dict[int, float]:
    """B ÷ A of req/s round by round, from the repetitions of each round that worked and whose interference
    was alike: both undisturbed, or others took about as much of the CPUs during each (see `alike`). Measured
    back to back, A and B meet the same noise: a pair hit alike still compares them, where dropping each
    disturbed repetition alone would lose the round."""
    side_a, side_b = view.run.subject(a), view.run.subject(b)
    run_a = side_a.cell(cell) if side_a else None
    run_b = side_b.cell(cell) if side_b else None
    if run_a is None or run_b is None:
        return {}
    worked_a = {rep.index: rep for rep in run_a.repetitions if rep.ok}
    worked_b = {rep.index: rep for rep in run_b.repetitions if rep.ok}
    ratios = {}
    for index in sorted(worked_a.keys() & worked_b.keys()):
        rep_a, rep_b = worked_a[index], worked_b[index]
        rate_a, rate_b = RPS.read(rep_a), RPS.read(rep_b)
        if rate_a and rate_b and alike(rep_a, rep_b, view.run.settings.disturbed_share):
            ratios[index] = rate_b / rate_a
    return ratios


def leaning(view: RunView, a: str, b: str, cell: str, heavier: str) -> dict[int, float]:
    """B ÷ A of req/s of the rounds whose repetitions met alike interference, and of those in which `heavier`
    (the copy a or b) met more of it than the other: a slowed A makes B look faster, a slowed B slower. A round in
    which the other copy met more counts too, bounded: others who took a share s of its wall time on the measured
    CPUs slowed it by at most that share, so its req/s ÷ (1 - s) is at least what it would have done alone (a
    round where s reaches 1 bounds nothing). Every ratio kept can then only lean away from what `heavier`'s
    direction calls."""
    side_a, side_b = view.run.subject(a), view.run.subject(b)
    run_a = side_a.cell(cell) if side_a else None
    run_b = side_b.cell(cell) if side_b else None
    if run_a is None or run_b is None:
        return {}
    worked_a = {rep.index: rep for rep in run_a.repetitions if rep.ok}
    worked_b = {rep.index: rep for rep in run_b.repetitions if rep.ok}
    share = view.run.settings.disturbed_share
    ratios = {}
    for index in sorted(worked_a.keys() & worked_b.keys()):
        rep_a, rep_b = worked_a[index], worked_b[index]
        rate_a, rate_b = RPS.read(rep_a), RPS.read(rep_b)
        hit, other = (rep_a, rep_b) if heavier == a else (rep_b, rep_a)
        if not (rate_a and rate_b):
            continue
        if alike(rep_a, rep_b, share) or hit_harder(hit, other):
            ratios[index] = rate_b / rate_a
        elif (spared := unslowed(other)) is not None:  # the other copy met more: its rate raised to its bound
            ratios[index] = rate_b * spared / rate_a if heavier == b else rate_b / (rate_a * spared)
    return ratios


def unslowed(rep: Repetition[Any]) -> float | None:
    """1 - s, s the share of the repetition's wall time that others took on the measured CPUs: its req/s ÷ this is
    at least what the server would have done alone (None where s reaches 1, or was not recorded)."""
    if rep.interference_s is None or not rep.wall_s:
        return None
    left = 1.0 - rep.interference_s / rep.wall_s
    return left if left > 0 else None


def hit_harder(hit: Repetition[Any], other: Repetition[Any]) -> bool:
    """Whether others took a larger share of `hit`'s wall time on the measured CPUs than of `other`'s."""
    if hit.interference_s is None or other.interference_s is None or not hit.wall_s or not other.wall_s:
        return False
    return hit.interference_s / hit.wall_s > other.interference_s / other.wall_s


def alike(a: Repetition[Any], b: Repetition[Any], share: float) -> bool:
    """Whether two repetitions measured back to back met alike interference: neither disturbed, or the shares
    of their wall time that others took on the measured CPUs differ by no more than `share` (the settings'
    disturbed_share, the limit that marks one repetition disturbed)."""
    if not (a.disturbed or b.disturbed):
        return True
    if a.interference_s is None or b.interference_s is None or not a.wall_s or not b.wall_s:
        return False
    return abs(a.interference_s / a.wall_s - b.interference_s / b.wall_s) <= share


def batch_ratios(a: list[float], b: list[float]) -> list[float]:
    """B ÷ A of each pair of batches at the same position."""
    return [top / bottom for top, bottom in zip(b, a, strict=False) if top > 0 and bottom > 0]


def batch_ratio(a: list[float], b: list[float], level: float) -> Interval | None:
    """B ÷ A of instructions per request, batch by batch: the same position in the same sequence of requests
    (the first batches still warm caches up on both sides, by up to 2 %), so the ratio pairs them."""
    found = ratio_interval(batch_ratios(a, b), level)
    return found if found is not None and found.bounded else None


def rates(view: RunView, subject: str, cell: str) -> list[float]:
    """The req/s of each repetition of a subject's cell that worked."""
    record = view.run.subject(subject)
    ran = record.cell(cell) if record else None
    reps = ran.repetitions if ran else ()
    return [rep.result.requests_per_s for rep in reps if rep.ok and rep.result is not None]


def batches(view: RunView, subject: str | None, cell: str) -> list[float]:
    """The instructions per request of each counted batch of a subject's cell (empty: not counted)."""
    counting = view.run.counting
    count = counting.of(subject, cell) if counting and subject else None
    if count is None or count.error:
        return []
    return [batch.per_request for batch in count.batches]


def time_untold(view: RunView, cell: PairedCell) -> str | None:
    """Why time gives no B ÷ A in a cell where both copies ran, and what to do (None: it gives one)."""
    if cell.time is not None:
        return None
    side_a = view.run.subject(cell.a)
    measured = side_a.cell(cell.cell) if side_a else None
    rounds = len(measured.repetitions) if measured else 0
    kept = len(alike_rounds(view, cell.a, cell.b, cell.cell))
    return (
        f"{cell.subject} {cell.cell}: time cannot tell: {rounds - kept} of {rounds} rounds had a copy fail or A and B "
        "meet unlike interference (others' work on the machine), which leaves too few pairs; judge by work, or "
        "re-run on a quiet machine"
    )
