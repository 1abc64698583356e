"""What the method's experiments show, recomputed from their runs: verdicts run by run, and how much
the per-round ratios of a claim's two figures scatter under each way of ordering a round."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from benchsite.model.run import RunDocument
from benchsite.results.claims import AnyClaim, State, Verdict
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
