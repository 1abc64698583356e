"""What a claim is decided on: one run, or every run of one machine pooled.

Claims ask their evidence the same questions either way (`Evidence`): a ratio between two figures
with its interval, whether a figure ran and is usable, and what keep-alive the repetitions saw.
`RunView` answers from one run's rounds; `Pooled` answers from several runs of one machine, each
run's estimate weighed by its precision, with a random-effects model (statsmodels' combine_effects,
Paule-Mandel) so that the interval carries the spread between runs as well as the noise in each.
One run alone is answered as that run answers it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from benchsite.results.intervals import LEVEL, Interval
from benchsite.results.metrics import RPS, Metric
from benchsite.results.view import RunView, SubjectCell


class Evidence(Protocol):
    """The questions a claim asks of what it is decided on."""

    def ratio(
        self, top: SubjectCell, bottom: SubjectCell, of: Metric = RPS, usable_only: bool = True
    ) -> Interval | None: ...

    def ran(self, subject: str, cell: str) -> bool: ...

    def usable(self, subject: str, cell: str) -> bool: ...

    def why_not(self, cells: list[SubjectCell]) -> str: ...

    def tool_limited(self, cells: list[SubjectCell]) -> bool: ...

    def busy_only(self, cells: list[SubjectCell]) -> bool: ...

    def measured_names(self) -> list[str]: ...

    def named(self, subject: str, cell: str | None = None) -> str: ...

    def cell_named(self, cell: str) -> str: ...

    def keepalive_seen(self, subject: str, cell: str) -> tuple[set[bool], int]: ...


def log_ratio_estimate(
    view: RunView, top: SubjectCell, bottom: SubjectCell, of: Metric, usable_only: bool = True
) -> tuple[float, float, int] | None:
    """One run's estimate of log(top ÷ bottom): the mean of its per-round log ratios, the variance of
    that mean, and the rounds (None with fewer than two usable paired rounds)."""
    import numpy as np

    a, b = view.round_values(*top, of, usable_only), view.round_values(*bottom, of, usable_only)
    if a is None or b is None:
        return None
    logs = np.log([a[r] / b[r] for r in sorted(a.keys() & b.keys()) if a[r] > 0 and b[r] > 0])
    if len(logs) < 2:
        return None
    return float(logs.mean()), float(logs.var(ddof=1) / len(logs)), len(logs)


def pooled_interval(estimates: Sequence[tuple[float, float, int]]) -> Interval:
    """Several runs' log-ratio estimates combined with a random-effects model; the 95 % interval of the
    pooled mean, back on the ratio scale."""
    import numpy as np
    from statsmodels.stats.meta_analysis import combine_effects  # imported when runs are first pooled

    effects = np.array([e for e, _, _ in estimates])
    variances = np.maximum(np.array([v for _, v, _ in estimates]), 1e-12)  # a run whose rounds all agreed
    result = combine_effects(effects, variances, method_re="iterated", use_t=False)
    low, high = result.conf_int(alpha=1 - LEVEL, use_t=False)[1]  # [fixed, random, ...]: the random effects
    rounds = sum(n for _, _, n in estimates)
    return Interval(
        value=float(np.exp(result.mean_effect_re)),
        low=float(np.exp(low)),
        high=float(np.exp(high)),
        level=LEVEL,
        count=rounds,
        runs=len(estimates),
    )


class Pooled:
    """Every run of one machine as one body of evidence."""

    def __init__(self, views: Sequence[RunView]) -> None:
        self.views = list(views)

    def ratio(
        self, top: SubjectCell, bottom: SubjectCell, of: Metric = RPS, usable_only: bool = True
    ) -> Interval | None:
        estimates = [
            e
            for view in self.views
            if (e := log_ratio_estimate(view=view, top=top, bottom=bottom, of=of, usable_only=usable_only)) is not None
        ]
        if len(estimates) >= 2:
            return pooled_interval(estimates)
        for view in reversed(self.views):  # one run (or none) with an interval: that run's own answer
            found = view.ratio(top, bottom, of, usable_only)
            if found is not None:
                return found
        return None

    def ran(self, subject: str, cell: str) -> bool:
        return any(view.ran(subject, cell) for view in self.views)

    def usable(self, subject: str, cell: str) -> bool:
        return any(view.usable(subject, cell) for view in self.views)

    def why_not(self, cells: list[SubjectCell]) -> str:
        return self.views[-1].why_not(cells) if self.views else "no run"

    def tool_limited(self, cells: list[SubjectCell]) -> bool:
        return bool(self.views) and all(view.tool_limited(cells) for view in self.views)

    def busy_only(self, cells: list[SubjectCell]) -> bool:
        return bool(self.views) and all(view.busy_only(cells) for view in self.views)

    def measured_names(self) -> list[str]:
        return list(dict.fromkeys(name for view in self.views for name in view.measured_names()))

    def named(self, subject: str, cell: str | None = None) -> str:
        return self.views[-1].named(subject, cell) if self.views else subject

    def cell_named(self, cell: str) -> str:
        return self.views[-1].cell_named(cell) if self.views else cell

    def keepalive_seen(self, subject: str, cell: str) -> tuple[set[bool], int]:
        seen: set[bool] = set()
        repetitions = 0
        for view in self.views:
            found, count = view.keepalive_seen(subject, cell)
            seen |= found
            repetitions += count
        return seen, repetitions
