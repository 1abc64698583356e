"""A run's time budget, a promise: the run says at its start when it will end, and ends by then. The timed rounds
go on while another one fits beside a reserve for what follows them (latency, flame graphs, counting), which is
estimated from the pace the rounds saw and held to at most RESERVE_SHARE of the budget; what follows then fits
what is left (fewer latency rounds, flame windows skipped, fewer counted starts or batches, each said) rather
than overrun it."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from benchsite.model.conf import Profile
from benchsite.model.counting import CountPlan
from benchsite.model.recipe import Recipe
from benchsite.tools.base import Repetition

Measured = dict[tuple[str, str], list[Repetition[Any]]]

# Timed req/s ÷ req/s under callgrind, over the 520 counts committed under data/ by 2026-11-27: 30 at the
# median, 45 at the 99th percentile, 51 at most (socketify). Counting's share is reserved at the 99th; the least
# the phases before it leave it (its smallest plan) at the median, since it then fits its batches to what is left.
CALLGRIND_SLOWDOWN = 45.0
CALLGRIND_MEDIAN = 30.0
# A server's start under callgrind and the counting around its batches, over the 199 committed experiment runs
# that counted: 2.6 s at the median, 5.5 s at the 90th percentile.
COUNTING_START_S = 6.0
BUDGET_HINT = "--budget SECONDS gives it more"
# While the rounds go on, at most this share of the budget is held back for what follows them: the rest is the
# rounds'. (An A/B run's counting, reserved whole at a busy machine's pace, once took more than the budget and left
# its rounds none; fitted to what is left, it counts fewer batches instead.)
RESERVE_SHARE = 0.5
# The fewest counted batches worth a start: two give counting's spread.
FEWEST_BATCHES = 2


@dataclass(frozen=True)
class Deadline:
    """When a run must end: its start on the monotonic clock, and its budget."""

    started: float
    budget_s: float

    def left_s(self) -> float:
        """The seconds left before the run must end."""
        return self.started + self.budget_s - time.monotonic()

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def ends_by(self) -> str:
        """The wall-clock time the run ends by ("02:13:40 UTC")."""
        end = datetime.now(UTC) + timedelta(seconds=self.left_s())
        return end.strftime("%H:%M:%S UTC")


@dataclass
class CountPace:
    """How fast counting goes on this machine: how many times slower a server serves under callgrind than it did
    in the timed rounds, and what a start costs beyond its requests; the median constants until the run has
    counted a server (counting fits its batches to what is left as it goes), then what the run saw (the slowest)."""

    slowdown: float = CALLGRIND_MEDIAN
    start_s: float = COUNTING_START_S
    seen: bool = False

    def saw(self, timed_rps: float | None, requests: int, serving_s: float, start_s: float) -> None:
        """One counted start: its requests took `serving_s` under callgrind, the rest of it `start_s`."""
        if timed_rps is None or requests <= 0 or serving_s <= 0:
            return
        slowdown = timed_rps * serving_s / requests
        self.slowdown = slowdown if not self.seen else max(self.slowdown, slowdown)
        self.start_s = start_s if not self.seen else max(self.start_s, start_s)
        self.seen = True


def pace(reps: Iterable[Repetition[Any]]) -> float | None:
    """The median req/s of the repetitions that worked: the counted ones, else (all disturbed) those."""
    worked = [rep for rep in reps if rep.ok and rep.result is not None]
    counted = [rep for rep in worked if rep.counted] or worked
    rates = [rep.result.requests_per_s for rep in counted if rep.result and rep.result.requests_per_s > 0]
    return statistics.median(rates) if rates else None


def counting_s(counting: CountPlan, servers: Iterable[str], measured: Measured, seen: CountPace | None = None) -> float:
    """How long counting these servers will take: each start's warm-up and batches at the pace the timed rounds
    saw, slowed as callgrind slows a server (`seen`: as this run saw it, else at CALLGRIND_SLOWDOWN, what the rounds
    reserve), plus the start; a server not yet timed in a counted cell at the plan's conservative pace."""
    seen = seen or CountPace(slowdown=CALLGRIND_SLOWDOWN)
    requests = counting.warmup_requests + counting.batches * counting.requests
    total = 0.0
    for server in servers:
        for cell in counting.cells:
            rate = pace(measured.get((server, cell), ()))
            serving_s = requests * seen.slowdown / rate if rate else requests / CountPlan.SLOWEST_RPS
            total += counting.starts * (seen.start_s + serving_s)
    return total


def smallest_counting(counting: CountPlan) -> CountPlan:
    """The least counting worth doing: one start of FEWEST_BATCHES batches."""
    return counting.model_copy(update={"starts": 1, "batches": min(counting.batches, FEWEST_BATCHES)})


def kept_for_counting_s(profile: Profile, servers: Sequence[str], measured: Measured) -> float:
    """What the phases before counting leave it: its smallest plan at the median slowdown (none where the profile
    counts nothing)."""
    if profile.counting is None:
        return 0.0
    return counting_s(smallest_counting(profile.counting), servers, measured, CountPace())


def fitted_counting(
    counting: CountPlan, servers: Sequence[str], measured: Measured, *, seconds: float, seen: CountPace
) -> CountPlan | None:
    """The plan with as many of its starts, then of its batches, as fit in `seconds` for these servers; None where
    not even the smallest fits."""
    for starts in range(counting.starts, 0, -1):
        for batches in range(counting.batches, FEWEST_BATCHES - 1, -1):
            fitted = counting.model_copy(update={"starts": starts, "batches": batches})
            if counting_s(fitted, servers, measured, seen) <= seconds:
                return fitted
            if starts > 1:
                break  # fewer starts before fewer batches
    return None


def fitted_said(planned: CountPlan, fitted: CountPlan | None, seconds: float) -> str:
    """What counting does with the time left, where it cannot do all it planned: how much less, and how much that
    widens work's interval (as the square root of the batches counted)."""
    if fitted is None:
        return f"counting skipped: not even one start of {FEWEST_BATCHES} batches fits the {seconds:.0f} s left"
    planned_n, fitted_n = planned.starts * planned.batches, fitted.starts * fitted.batches
    wider = math.sqrt(planned_n / fitted_n)
    return (
        f"counting {fitted.starts} start{'s' * (fitted.starts != 1)} of {planned.starts}, {fitted.batches} batches "
        f"each of {planned.batches}, to fit the {seconds:.0f} s left: {fitted_n} batches of {planned_n}, so work's "
        f"interval about {wider:.1f}× as wide"
    )


# What a latency repetition or a flame graph's window adds to its set seconds (start, settle, end).
WINDOW_EXTRA_S = 1.0


def after_rounds_s(recipe: Recipe, profile: Profile, servers: Sequence[str], measured: Measured) -> float:
    """How long what follows the timed rounds will take: the open-loop latency loads, the flame graphs (each a
    window of set seconds) and counting (`counting_s`)."""
    total = counting_s(profile.counting, servers, measured) if profile.counting is not None else 0.0
    if profile.latency is not None:
        total += profile.latency.rounds * latency_round_s(profile, len(servers))
    for flame in (recipe.flame, recipe.wallclock):
        if flame is not None and profile.name in flame.profiles:
            total += len(servers) * len(flame.cells) * flame_window_s(flame.seconds)
    return total


def latency_round_s(profile: Profile, servers: int) -> float:
    """One round of the open-loop latency loads: every server at every offered load."""
    assert profile.latency is not None
    return servers * len(profile.latency.fractions) * (profile.latency.seconds + WINDOW_EXTRA_S)


def flame_window_s(seconds: float) -> float:
    """A flame graph of one server in one cell: two recordings (the SVG and the collapsed stacks)."""
    return 2 * (seconds + WINDOW_EXTRA_S)


def reserve_s(after_s: float, budget_s: float) -> float:
    """What the rounds leave for what follows them: its estimate, at most RESERVE_SHARE of the budget."""
    return min(after_s, RESERVE_SHARE * budget_s)


def promise_said(profile: Profile, subjects: int, cells: int, deadline: Deadline) -> str:
    """What a run with a budget will measure, and by when it ends: said before it starts."""
    further = ", then further rounds while they fit" if profile.max_rounds else ""
    after = [
        name for name, asked in (("latency", profile.latency), ("counting", profile.counting)) if asked is not None
    ]
    follows = f"; {' and '.join(after)} within what is left" if after else ""
    return (
        f"time budget {deadline.budget_s:g} s: {profile.rounds} round{'s' * (profile.rounds != 1)} of {subjects} "
        f"subject{'s' * (subjects != 1)} in {cells} cell{'s' * (cells != 1)}{further}{follows}; "
        f"ends by {deadline.ends_by()}"
    )


def ended_said(deadline: Deadline) -> str:
    """How the run kept its budget."""
    took = deadline.elapsed_s()
    over = took - deadline.budget_s
    kept = "within it" if over <= 0 else f"{over:.0f} s over it"
    return f"the run took {took:.0f} s of its {deadline.budget_s:g} s budget: {kept}"


@dataclass
class RoundClock:
    """The wall time of each round made, to tell what a round costs beyond its repetitions (new starts of the
    servers, warm-ups, the look after it)."""

    took_s: dict[int, float] = field(default_factory=dict)

    def overhead_s(self, measured: Measured) -> float:
        """The median over the rounds made of their wall time less their repetitions' (0 before any)."""
        spent: dict[int, float] = {}
        for reps in measured.values():
            for rep in reps:
                spent[rep.index] = spent.get(rep.index, 0.0) + rep.wall_s
        extra = [max(0.0, took - spent.get(index, 0.0)) for index, took in self.took_s.items()]
        return statistics.median(extra) if extra else 0.0

    def estimate_s(self, cells: Iterable[tuple[str, str]], measured: Measured) -> float:
        """How long one more round of these (subject, cell)s takes: each one's median repetition, plus what
        a round has cost beyond its repetitions so far."""
        reps = sum(statistics.median(rep.wall_s for rep in measured[cell]) for cell in cells if measured.get(cell))
        return reps + self.overhead_s(measured)


def budget_said(budget_s: float, elapsed_s: float, after_s: float, round_s: float) -> str:
    """Where the budget stands after the profile's first rounds: what follows the timed rounds will take, what
    a round takes, how many more rounds fit, and how to give it more."""
    left = budget_s - elapsed_s - after_s
    fit = max(0, int(left // round_s)) if round_s > 0 else 0
    kept = (
        f", about {after_s:.0f} s kept for what follows the rounds (from the pace seen, at most "
        f"{100 * RESERVE_SHARE:.0f} % of the budget)"
        if after_s
        else ""
    )
    return (
        f"time budget {budget_s:g} s: {elapsed_s:.0f} s so far{kept}, a round of every cell about {round_s:.0f} s, "
        f"room for about {fit} more round{'s' * (fit != 1)} ({BUDGET_HINT})"
    )
