"""What the method's experiments show, recomputed from their runs: verdicts run by run, how much the per-round
ratios of a claim's two figures scatter under each way of ordering a round, and an A/B run's under each length
of slice."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from benchsite.model.run import RunDocument
from benchsite.results.claims import AnyClaim, State, Verdict
from benchsite.results.comparing import alike_rounds
from benchsite.results.published import Published
from benchsite.results.view import RunView


@dataclass(frozen=True)
class Stability:
    """Each claim's verdict in each of several runs, and whether they agree."""

    runs: list[RunDocument]
    verdicts: list[list[Verdict]]  # per run, per claim

    def consistent(self, claim_index: int) -> bool:
        """No run decided it one way and another run the other way (inconclusive agrees with both)."""
        states = {run[claim_index].state for run in self.verdicts}
        return not {State.HOLDS, State.DOES_NOT_HOLD} <= states

    def decided_share(self, run_index: int) -> float | None:
        """The share of the claims that could run which this run decided (None: none could run)."""
        ran = [v for v in self.verdicts[run_index] if not v.state.decided_nothing]
        return sum(v.state in (State.HOLDS, State.DOES_NOT_HOLD) for v in ran) / len(ran) if ran else None


def stability(runs: list[RunDocument], published: Published) -> Stability:
    return Stability(runs, [published.verdicts(RunView(run)) for run in runs])


def log_ratio_spread(run: RunDocument, claim: AnyClaim) -> float | None:
    """The standard deviation of the log per-round ratios that decide a claim in one run (0.10 ≈ 10 %); None
    where the claim is not decided on a ratio or the run gives fewer than two rounds of it."""
    ratios = claim.round_ratios(RunView(run))
    return float(np.std(np.log(ratios), ddof=1)) if ratios is not None and len(ratios) >= 2 else None


def median_spread(runs: list[RunDocument], claim: AnyClaim) -> float | None:
    """The median over runs of a claim's per-round scatter."""
    spreads = [s for run in runs if (s := log_ratio_spread(run, claim)) is not None]
    return statistics.median(spreads) if spreads else None


@dataclass(frozen=True)
class Slices:
    """A/B runs measured in slices of one length: how much their round ratios scatter, raw and per second."""

    label: str
    runs: int
    requests: int  # a slice: one side's repetition
    round_s: float  # the median wall time of a round's two slices
    spread: float  # the median over the runs of the standard deviation of the log round ratios

    @property
    def per_second(self) -> float:
        """The spread a round of one second would have if the noise were independent from request to request
        (spread × √round_s): alike for two slice lengths, slicing finer cancels nothing more."""
        return self.spread * float(np.sqrt(self.round_s))


def slices(label: str, views: list[RunView], subject: str, cell: str) -> Slices:
    """The scatter of one subject's A/B round ratios in one cell, over runs measured in one slice length."""
    spreads, round_s = [], []
    for view in views:
        a, b = (f"{subject}-{side}" for side in "ab")
        ratios = list(alike_rounds(view, a, b, cell).values())
        spreads.append(float(np.std(np.log(ratios), ddof=1)))
        walls = [rep.wall_s for name in (a, b) for rep in view.run.subject(name).cell(cell).repetitions]  # type: ignore[union-attr]
        round_s.append(2 * statistics.median(walls))
    requests = {view.run.profile.requests for view in views}
    return Slices(
        label=label,
        runs=len(views),
        requests=min(requests),
        round_s=statistics.median(round_s),
        spread=statistics.median(spreads),
    )
