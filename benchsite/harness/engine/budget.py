"""A run's time budget, shared between its timed rounds and the counting after them: what counting will use,
from the pace the timed rounds saw, and how long one more round of some cells takes, from the rounds made."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchsite.model.conf import Profile
from benchsite.model.counting import CountPlan
from benchsite.model.recipe import Recipe
from benchsite.tools.base import Repetition

Measured = dict[tuple[str, str], list[Repetition[Any]]]

# Timed req/s ÷ req/s under callgrind, over the 520 counts committed under data/ by 2026-11-27: 30 at the
# median, 45 at the 99th percentile, 51 at most (socketify). Counting's share is reserved at the 99th.
CALLGRIND_SLOWDOWN = 45.0
# A server's start under callgrind and the counting around its batches, over the 199 committed experiment runs
# that counted: 2.6 s at the median, 5.5 s at the 90th percentile.
COUNTING_START_S = 6.0
BUDGET_HINT = "--budget SECONDS gives it more"


def pace(reps: Iterable[Repetition[Any]]) -> float | None:
    """The median req/s of the repetitions that worked: the counted ones, else (all disturbed) those."""
    worked = [rep for rep in reps if rep.ok and rep.result is not None]
    counted = [rep for rep in worked if rep.counted] or worked
    rates = [rep.result.requests_per_s for rep in counted if rep.result and rep.result.requests_per_s > 0]
    return statistics.median(rates) if rates else None


def counting_s(counting: CountPlan, servers: Iterable[str], measured: Measured) -> float:
    """How long counting these servers will take: each start's warm-up and batches at the pace the timed rounds
    saw, slowed as callgrind slows a server (CALLGRIND_SLOWDOWN), plus the start; a server not yet timed in a
    counted cell at the plan's conservative pace."""
    requests = counting.warmup_requests + counting.batches * counting.requests
    total = 0.0
    for server in servers:
        for cell in counting.cells:
            rate = pace(measured.get((server, cell), ()))
            serving_s = requests * CALLGRIND_SLOWDOWN / rate if rate else requests / CountPlan.SLOWEST_RPS
            total += counting.starts * (COUNTING_START_S + serving_s)
    return total


# What a latency repetition or a flame graph's window adds to its set seconds (start, settle, end).
WINDOW_EXTRA_S = 1.0


def after_rounds_s(recipe: Recipe, profile: Profile, servers: Sequence[str], measured: Measured) -> float:
    """How long what follows the timed rounds will take: the open-loop latency loads, the flame graphs (each a
    window of set seconds) and counting (`counting_s`)."""
    total = counting_s(profile.counting, servers, measured) if profile.counting is not None else 0.0
    if profile.latency is not None:
        each = profile.latency.seconds + WINDOW_EXTRA_S
        total += len(servers) * len(profile.latency.fractions) * profile.latency.rounds * each
    for flame in (recipe.flame, recipe.wallclock):
        if flame is not None and profile.name in flame.profiles:
            total += len(servers) * len(flame.cells) * (flame.seconds + WINDOW_EXTRA_S)
    return total


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
    kept = f", about {after_s:.0f} s for what follows the rounds (from the pace seen)" if after_s else ""
    return (
        f"time budget {budget_s:g} s: {elapsed_s:.0f} s so far{kept}, a round of every cell about {round_s:.0f} s, "
        f"room for about {fit} more round{'s' * (fit != 1)} ({BUDGET_HINT})"
    )
