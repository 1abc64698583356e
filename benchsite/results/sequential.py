"""Intervals that stay honest when looked at after every round: a confidence sequence for B ÷ A.

A sequential A/B run looks at its paired ratios after every round and stops once they answer. A t interval
looked at that often calls far more A/A changes than its level says (a simulation: about one A/A run in three
with 64 looks at 95 %). A confidence sequence holds at its level over every look at once.

This one inverts the Bayesian t test of Rouder et al. (2009): the per-round log ratios are taken as normal with
unknown mean and spread; under "no change" (mean 0) against a Cauchy prior on the effect size (mean ÷ spread,
scale r = √2/2) with the spread's right-Haar prior, the Bayes factor after n rounds depends on t alone. That
factor is a test martingale under the null (Pérez-Ortiz, Lardy, de Heide and Grünwald, "E-statistics, group
invariance and anytime-valid testing", 2024; Lindon et al., "Anytime-valid linear models", 2022), so by Ville's
inequality it exceeds 1 ÷ α at any round at all with probability at most α: the always-valid p-value of
Johari, Koomen, Pekelis and Walsh (KDD 2017). The interval after n rounds is every mean whose factor is still
below 1 ÷ α: the mean ± t* s ÷ √n, with t* where the factor reaches 1 ÷ α. Its width shrinks as the rounds
grow, as a t interval's does, but wider at each look, the price of looking at all of them (Howard, Ramdas,
McAuliffe and Sekhon, Annals of Statistics 2021, on confidence sequences in general).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence

from benchsite.results.intervals import LEVEL, Interval

CAUCHY_SCALE = math.sqrt(2) / 2  # the prior's scale on the effect size: Rouder et al.'s default ("medium")
T_LIMIT = 1e6  # beyond this t no factor is sought: the interval is then unbounded at this many rounds
MAX_LOG = math.log(1e9)  # an interval reaching beyond a billion-fold either way is shown as having no bound yet


def log_bayes_factor(t: float, n: int, r: float = CAUCHY_SCALE) -> float:
    """The logarithm of the JZS Bayes factor for a one-sample t test (Rouder et al. 2009, eq. 1): t from n values,
    the effect size's Cauchy prior of scale r; above 0 the data favour a mean other than the one tested."""
    import numpy as np
    from scipy import integrate, special

    if n < 2:
        return 0.0
    dof = n - 1

    def log_integrand(u: float) -> float:
        # Zellner-Siow: g ~ inverse-gamma(1/2, r²/2), the normal prior's variance on the effect size; over u = log g.
        g = math.exp(u)
        log_prior = 0.5 * math.log(r**2 / 2) - special.gammaln(0.5) - 1.5 * u - r**2 / (2 * g)
        ratio = (1 + t**2 / dof) / (1 + t**2 / (dof * (1 + n * g)))
        return -0.5 * math.log1p(n * g) + (n / 2) * math.log(ratio) + log_prior + u

    # The mass lies on a log scale of g: integrate over log g in pieces, scaled by the largest value on a grid.
    edges = [-30.0, -10.0, -3.0, 0.0, 3.0, 10.0, 20.0, 40.0, 60.0]
    peak = max(log_integrand(float(u)) for u in np.linspace(edges[0], edges[-1], 400))
    total = sum(
        integrate.quad(lambda u: math.exp(log_integrand(u) - peak), low, high, limit=200)[0]
        for low, high in itertools.pairwise(edges)
    )
    return peak + math.log(total)


@functools.lru_cache(maxsize=4096)
def critical_t(n: int, level: float = LEVEL) -> float | None:
    """The |t| at which n values' Bayes factor reaches 1 ÷ (1 - level); None where no t below T_LIMIT does
    (too few values for this level: the interval is then the whole line)."""
    from scipy import optimize

    bound = -math.log(1 - level)
    if n < 2 or log_bayes_factor(T_LIMIT, n) < bound:
        return None
    return float(optimize.brentq(lambda t: log_bayes_factor(t, n) - bound, 0.0, T_LIMIT, xtol=1e-9, rtol=1e-10))


def sequence_interval(ratios: Sequence[float], level: float = LEVEL) -> Interval | None:
    """The geometric mean of paired ratios with its confidence-sequence interval at `level`: valid however often
    the ratios were looked at while they accrued (unbounded where too few rounds can say anything yet)."""
    import numpy as np

    if not ratios:
        return None
    logs = np.log(np.asarray(ratios, dtype=float))
    centre = float(np.exp(logs.mean()))
    critical = critical_t(len(logs), level)
    if critical is None:
        return Interval(value=centre, low=None, high=None, level=level, count=len(logs))
    spread = float(np.std(logs, ddof=1))
    half = critical * spread / math.sqrt(len(logs))
    if abs(float(logs.mean())) + half > MAX_LOG:  # wider than any ratio a page could print: no bound yet
        return Interval(value=centre, low=None, high=None, level=level, count=len(logs))
    return Interval(
        value=centre,
        low=float(np.exp(logs.mean() - half)),
        high=float(np.exp(logs.mean() + half)),
        level=level,
        count=len(logs),
    )


def within(interval: Interval | None, smallest: float) -> bool:
    """The interval lies wholly within ±smallest of no change: any change is smaller than what matters."""
    return bool(
        smallest
        and interval
        and interval.low is not None
        and interval.high is not None
        and interval.low >= 1 - smallest
        and interval.high <= 1 + smallest
    )


def sequence_detectable(ratios: Sequence[float], level: float, margin: float) -> float | None:
    """The smallest change (B ÷ A - 1, either way) the confidence sequence would call about 80 % of the time at
    this many rounds with their spread: its critical t plus the normal's 80th percentile, in standard errors,
    beyond ±margin (None where too few rounds give an interval)."""
    import numpy as np
    from scipy import stats

    logs = np.log(np.asarray(ratios, dtype=float))
    critical = critical_t(len(logs), level) if len(logs) >= 2 else None
    if critical is None:
        return None
    spread = float(np.std(logs, ddof=1))
    shift = (critical + float(stats.norm.ppf(0.8))) * spread / math.sqrt(len(logs))
    return None if shift > MAX_LOG else float(np.expm1(np.log1p(margin) + shift))
