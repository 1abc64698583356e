"""Confidence intervals: of a cell's median, and of a ratio between two cells measured round by round.

A median gets a distribution-free order-statistic interval (scipy's `quantile_test`). A ratio is
estimated from rounds: each round measured both sides close together, so a slow phase of the
machine hits both; the estimate is the geometric mean of the per-round ratios, with a t interval
on their logarithms (scipy's `ttest_1samp`). Both are deterministic: a page rebuilds identically.
numpy is imported where an interval is computed, as scipy is: a run with no claim never needs either
(numpy's import is 60 ms of each such `invoke recipe`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType

LEVEL = 0.95  # the confidence of every interval on the site


def simultaneous_level(count: int) -> float:
    """The level of each of `count` intervals that hold together at LEVEL (Bonferroni): "changed" then keeps
    its 5 % error over the whole list, not over each line of it."""
    return 1 - (1 - LEVEL) / max(count, 1)


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval (None where the data cannot give one) and the interval's coverage."""

    value: float
    low: float | None
    high: float | None
    level: float  # the interval's confidence (below LEVEL where too few values allow no more)
    count: int  # how many values (or paired rounds) it rests on
    runs: int = 1  # how many runs it pools (1: the rounds of one run)

    @property
    def bounded(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def relative_half_width(self) -> float | None:
        """Half the interval's width over the value: 0.05 reads "± 5 %"."""
        if self.low is None or self.high is None or self.value == 0:
            return None
        return (self.high - self.low) / 2 / self.value


def _stats() -> ModuleType:
    """scipy.stats, imported when an interval is first computed: it takes a second to import, and a
    docs rebuild with nothing changed computes none."""
    from scipy import stats

    return stats


def half_width(interval: Interval) -> float | None:
    """How far the interval reaches either side of its centre, as a share (geometric: ±5 % is 0.05)."""
    if interval.low is None or interval.high is None or interval.low <= 0:
        return None
    return math.sqrt(interval.high / interval.low) - 1


def level_label(level: float) -> str:
    """An interval's confidence as pages print it: 95 %, 93.8 % (the min–max of five), 75 %."""
    return f"{100 * level:.1f}".removesuffix(".0") + " %"


def levels_label(intervals: Sequence[Interval | None]) -> str:
    """The levels of the intervals shown together: "95 %", or "93.8 % or 95 %" where they differ."""
    found = sorted({i.level for i in intervals if i is not None and i.low is not None})
    return " or ".join(level_label(level) for level in found) or level_label(LEVEL)


def median_interval(values: Sequence[float]) -> Interval | None:
    """The median and an order-statistic interval for it: at 95 % where the count allows, else min–max.

    With n values, [min, max] covers the median with probability 1 - 2 * 0.5**n (93.8 % for n = 5);
    from n = 6 a narrower interval reaches 95 %.
    """
    return _median_interval(tuple(values))


@functools.lru_cache(maxsize=4096)  # a site build asks for the same cells' intervals from page to page
def _median_interval(values: tuple[float, ...]) -> Interval | None:
    import numpy as np

    if not values:
        return None
    data = np.asarray(values, dtype=float)
    median = float(np.median(data))
    if len(data) < 2:
        return Interval(value=median, low=None, high=None, level=0.0, count=len(data))
    found = _stats().quantile_test(data, q=median, p=0.5).confidence_interval(LEVEL)
    if math.isfinite(found.low) and math.isfinite(found.high):
        return Interval(value=median, low=float(found.low), high=float(found.high), level=LEVEL, count=len(data))
    coverage = 1.0 - 2.0 * float(_stats().binom.cdf(0, len(data), 0.5))
    return Interval(value=median, low=float(data.min()), high=float(data.max()), level=coverage, count=len(data))


def paired_rounds(top: Mapping[int, float], bottom: Mapping[int, float]) -> list[float]:
    """The per-round ratios top / bottom, for the rounds both sides measured (positive values only)."""
    return [top[r] / bottom[r] for r in sorted(top.keys() & bottom.keys()) if top[r] > 0 and bottom[r] > 0]


def ratio_interval(ratios: Sequence[float], level: float = LEVEL) -> Interval | None:
    """The geometric mean of per-round ratios, with a t interval at `level` on their logarithms (none below
    2 rounds)."""
    return _ratio_interval(tuple(ratios), level)


@functools.lru_cache(maxsize=4096)
def _ratio_interval(ratios: tuple[float, ...], level: float) -> Interval | None:
    import numpy as np

    if not ratios:
        return None
    logs = np.log(np.asarray(ratios, dtype=float))
    centre = float(np.exp(logs.mean()))
    if len(logs) < 2:
        return Interval(value=centre, low=None, high=None, level=0.0, count=1)
    if float(np.ptp(logs)) == 0.0:  # every round gave the same ratio
        return Interval(value=centre, low=centre, high=centre, level=level, count=len(logs))
    found = _stats().ttest_1samp(logs, 0.0).confidence_interval(level)
    return Interval(
        value=centre, low=float(np.exp(found.low)), high=float(np.exp(found.high)), level=level, count=len(logs)
    )


def ratio_intervals(ratio_lists: Sequence[Sequence[float]], level: float = LEVEL) -> list[Interval | None]:
    """`ratio_interval` of each list, the t intervals of lists of one length in one call of scipy's test
    (the calibration page asks for a thousand: one by one they took a second of each site build)."""
    import numpy as np

    found: list[Interval | None] = [None] * len(ratio_lists)
    by_length: dict[int, list[int]] = {}
    for index, ratios in enumerate(ratio_lists):
        logs = np.log(np.asarray(ratios, dtype=float))
        if len(logs) < 2 or float(np.ptp(logs)) == 0.0:
            found[index] = ratio_interval(ratios, level)
        else:
            by_length.setdefault(len(logs), []).append(index)
    for indices in by_length.values():
        logs = np.log(np.asarray([ratio_lists[i] for i in indices], dtype=float))
        bounds = _stats().ttest_1samp(logs, 0.0, axis=1).confidence_interval(level)
        for row, index in enumerate(indices):
            centre = float(np.exp(logs[row].mean()))
            low, high = float(np.exp(bounds.low[row])), float(np.exp(bounds.high[row]))
            found[index] = Interval(value=centre, low=low, high=high, level=level, count=logs.shape[1])
    return found


def difference_interval(differences: Sequence[float]) -> Interval | None:
    """The mean of per-round differences, with a t interval (none below 2 rounds)."""
    import numpy as np

    if not differences:
        return None
    data = np.asarray(differences, dtype=float)
    mean = float(data.mean())
    if len(data) < 2:
        return Interval(value=mean, low=None, high=None, level=0.0, count=1)
    if float(np.ptp(data)) == 0.0:
        return Interval(value=mean, low=mean, high=mean, level=LEVEL, count=len(data))
    found = _stats().ttest_1samp(data, 0.0).confidence_interval(LEVEL)
    return Interval(value=mean, low=float(found.low), high=float(found.high), level=LEVEL, count=len(data))


def unpaired_ratio_interval(
    top: Sequence[float], bottom: Sequence[float], level: float = LEVEL, drift: float = 0.0
) -> tuple[Interval, float] | None:
    """Two independent samples (two runs): the ratio of geometric means, a Welch t interval on the logs at
    `level`, and the test's p-value (None below two values a side). `drift` is the standard deviation of a
    run's log mean from run to run beyond its own repetitions' noise (two runs: its variance counts twice)."""
    import numpy as np

    if len(top) < 2 or len(bottom) < 2:
        return None
    a, b = np.log(np.asarray(top, dtype=float)), np.log(np.asarray(bottom, dtype=float))
    centre = float(np.exp(a.mean() - b.mean()))
    if float(np.ptp(a)) == 0.0 and float(np.ptp(b)) == 0.0 and not drift:
        return Interval(
            value=centre, low=centre, high=centre, level=level, count=min(len(a), len(b))
        ), 0.0 if centre != 1.0 else 1.0
    if not drift:
        result = _stats().ttest_ind(a, b, equal_var=False)
        found = result.confidence_interval(level)
        interval = Interval(
            value=centre,
            low=float(np.exp(found.low)),
            high=float(np.exp(found.high)),
            level=level,
            count=min(len(a), len(b)),
        )
        return interval, float(result.pvalue)
    var_a, var_b = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = float(np.sqrt(var_a + var_b + 2 * drift**2))
    within = var_a + var_b
    df = within**2 / (var_a**2 / (len(a) - 1) + var_b**2 / (len(b) - 1)) if within > 0 else np.inf  # Welch's
    t = _stats().t
    half = float(t.ppf(1 - (1 - level) / 2, df)) * se
    difference = float(a.mean() - b.mean())
    p_value = float(2 * t.sf(abs(difference) / se, df))
    interval = Interval(
        value=centre,
        low=float(np.exp(difference - half)),
        high=float(np.exp(difference + half)),
        level=level,
        count=min(len(a), len(b)),
    )
    return interval, p_value


DETECTION_POWER = 0.8  # how often a change of the detectable size is called


def detectable_change(ratios: Sequence[float], level: float, margin: float) -> float | None:
    """The smallest change (B ÷ A - 1, either way) that paired ratios with this spread would call DETECTION_POWER
    of the time: a t interval at `level` on their logarithms lying wholly beyond ±margin (statsmodels' power of
    the one-sample t test, one-sided at half the interval's error); None below 2 ratios."""
    import numpy as np
    from statsmodels.stats.power import TTestPower

    logs = np.log(np.asarray(ratios, dtype=float))
    if len(logs) < 2:
        return None
    spread = float(np.std(logs, ddof=1))
    if spread == 0.0:
        return margin
    effect = TTestPower().solve_power(
        effect_size=None, nobs=len(logs), alpha=(1 - level) / 2, power=DETECTION_POWER, alternative="larger"
    )
    return float(np.expm1(np.log1p(margin) + float(effect) * spread))
