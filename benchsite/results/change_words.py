"""An A/B change in words, as the A/B page and the terminal say it: "4.8 % slower (95 %: 3.5 % to 6.1 %), changed",
a factor where the change is large ("143× slower"), one format a column, and what a currency could have seen."""

from __future__ import annotations

import math
from collections.abc import Sequence

from benchsite.results.comparing import MARGIN, Bound, PairedCell
from benchsite.results.factors import (
    FASTER,
    MORE_INSTRUCTIONS,
    Direction,
    factor,
    factor_range,
    fmt_level,
    percent,
    percent_or_factor,
    percent_range,
    times,
    with_range,
)
from benchsite.results.intervals import Interval
from benchsite.results.sequential import within


def change_said(
    interval: Interval | None,
    changed: bool,
    margin: float = MARGIN,
    words: Direction = FASTER,
    smallest: float = 0.0,
    bound: Bound = "",
    factors: bool | None = None,
    weakest: float | None = None,
    note: str = "",
) -> str:
    """ "4.8 % slower (95 %: 3.5 % to 6.1 %), changed"; a change beyond ±50 % as factors ("143× slower (95 %: 36×
    to 550×), changed"), or every change so where `factors` (a column whose other cells need them: one format a
    column; False: percent however large); or "—" where there is no estimate. With the smallest change that
    matters: "no change beyond ±5 %" where the interval lies within it, else "undecided". A change called from
    rounds one side met more of others' work in is said as the bound it is, at the strongest its rounds support
    (`weakest`: the round nearest no change): "51.0× slower or more in each of its 3 rounds (1.39× slower or beyond
    at 95 %) …: changed". `note` says why a change has no estimate, or what to keep in mind beside it (`invoke
    compare`'s cells)."""
    said = _change_said(
        interval,
        changed,
        margin=margin,
        words=words,
        smallest=smallest,
        bound=bound,
        factors=factors,
        weakest=weakest,
    )
    if note:
        return note if said in ("—", "") else f"{said} ({note})"
    return said


def _change_said(
    interval: Interval | None,
    changed: bool,
    *,
    margin: float,
    words: Direction,
    smallest: float,
    bound: Bound,
    factors: bool | None,
    weakest: float | None,
) -> str:
    if bound and interval is not None and interval.low is not None and interval.high is not None:
        look, never = ("faster", "slower") if bound == "at most" else ("slower", "faster")
        return (
            f"{bound_said(interval, bound, weakest, margin=margin, words=words, factors=factors)}; where others' "
            "work hit one side "
            f"harder, a round counts only as a bound that can make B look {look}, never {never}: changed"
        )
    if interval is None or interval.low is None or interval.high is None:
        return "—" if not smallest else "undecided: too few rounds for an interval"
    verdict = "changed" if changed else (f"no change beyond ±{100 * margin:g} %" if margin else "no change seen")
    if smallest and not changed:
        verdict = f"no change beyond ±{100 * smallest:g} %" if within(interval, smallest) else "undecided"
    if factors or (factors is None and needs_factors(interval)):
        return f"{with_range(interval, words)}, {verdict}"
    spans = percent_range(interval, words, worded=False)
    return f"{percent(interval.value, words)} ({fmt_level(interval)}: {spans}), {verdict}"


def bound_said(
    interval: Interval,
    bound: Bound,
    weakest: float | None,
    margin: float = MARGIN,
    words: Direction = FASTER,
    factors: bool | None = None,
) -> str:
    """A one-sided change at the strongest its rounds support: "51.4× slower or more in each of its 4 starts
    (1.39× slower or beyond at 95 %)"; its interval's edge alone where the rounds are not known."""
    edge = interval.high if bound == "at most" else interval.low
    assert edge is not None

    def size(ratio: float) -> str:
        return factor(ratio, words) if factors else percent_or_factor(ratio, words)

    units = "starts" if margin == 0 else "rounds"  # a run of several starts rests on each start's mean
    if weakest is None:
        return f"{size(edge)} or beyond over its {interval.count} {units} ({fmt_level(interval)})"
    return (
        f"{size(weakest)} or more in each of its {interval.count} {units} ({size(edge)} or beyond at "
        f"{fmt_level(interval)})"
    )


def fmt_spans(interval: Interval) -> str:
    """ "(99.9 %: 22.0× to 27,811×)": an interval as factors at its own level."""
    return f"({fmt_level(interval)}: {factor_range(interval, worded=False)})"


def rounds_one_way_said(ratios: Sequence[float], where: str) -> str:
    """Where every paired round went one way: "faster in 6 of 6 rounds at -c 1 -k, by 1.17× to 1.35×" ("" where
    the rounds went both ways, or there are fewer than two)."""
    if len(ratios) < 2 or not (all(r > 1 for r in ratios) or all(r < 1 for r in ratios)):
        return ""
    word = "faster" if ratios[0] > 1 else "slower"
    sizes = sorted(r if r > 1 else 1 / r for r in ratios)
    return f"{word} in {len(ratios)} of {len(ratios)} rounds at {where}, by {times(sizes[0])} to {times(sizes[-1])}"


def whole_percent(ratio: float, words: Direction) -> str:
    """A small change in whole percent: 1.26 → "26 % more instructions per request", 0.95 → "5 % fewer …"."""
    if ratio >= 1:
        return f"{100 * (ratio - 1):.0f} % {words.more}"
    return f"{100 * (1 - ratio):.0f} % {words.less}"


def signed_percent(ratio: float) -> str:
    """ "+1.7 %": a ratio as a signed change."""
    return f"{100 * (ratio - 1):+.1f} %"


def needs_factors(interval: Interval | None) -> bool:
    """Whether a change is said as factors: its interval reaches beyond ±50 %."""
    if interval is None or interval.low is None or interval.high is None:
        return False
    return not all(2 / 3 <= bound <= 1.5 for bound in (interval.low, interval.high))


def fmt_sees(sees: float | None) -> str:
    """ "≥ 2.1 %": the smallest change a currency would call here ("≥ 5.75× either way" beyond 50 %), "no change
    it could see" where it could see none (`comparing.could_see`: inf), or "—" without a spread to tell."""
    if sees is None:
        return "—"
    if math.isinf(sees):
        return "no change it could see"
    return f"≥ {100 * sees:.1f} %" if sees < 0.5 else f"≥ {times(1 + sees)} either way"


def blind_said(blind: Sequence[float], cells: int, rounds: int, disturbed: tuple[int, int]) -> str:
    """Why time could not answer in `blind` (what it could see in each such cell, inf: nothing) of `cells` cells:
    the rounds it made and how many of its `disturbed` = (disturbed, all) repetitions others took a CPU in."""
    seen = [sees for sees in blind if not math.isinf(sees)]
    sees = (
        f"sees no change smaller than {fmt_sees(min(seen)).removeprefix('≥ ')}" if seen else "could not see any change"
    )
    hit, made = disturbed
    why = f"others took a CPU in {hit} of its {made} repetitions" if hit else "too few to tell"
    return (
        f"time in this run {sees} in {len(blind)} of {cells} cells ({rounds} rounds, {why}): judge by work, or "
        "re-run on a quiet machine"
    )


def cells_said(cells: Sequence[PairedCell]) -> list[tuple[str, str]]:
    """Each cell's change in time and in work, in words, one format a column: factors in a column where any of
    its cells needs them."""
    time_factors = any(needs_factors(cell.time) for cell in cells)
    work_factors = any(needs_factors(cell.work) for cell in cells)
    return [
        (
            change_said(
                cell.time,
                cell.time_changed,
                cell.time_margin,
                smallest=cell.design.smallest_change,
                bound=cell.time_bound,
                factors=time_factors,
                weakest=cell.weakest_round,
            ),
            change_said(cell.work, cell.work_changed, cell.work_margin, MORE_INSTRUCTIONS, factors=work_factors),
        )
        for cell in cells
    ]


def detectable_said(cells: Sequence[PairedCell]) -> str:
    """What the run could have seen: per currency, the smallest change it would have called 80 % of the time,
    over its cells (from the spread of its own rounds and batches)."""

    def span(found: list[float]) -> str:
        low, high = f"{100 * min(found):.1f}", f"{100 * max(found):.1f}"
        return f"{low} %" if low == high else f"{low} % to {high} % by cell"

    parts = []
    open_cells = [c for c in cells if not c.design.decided(c)]  # a decided cell has its answer
    for currency, found in (
        ("time", [c.time_could_see for c in open_cells if c.time_could_see is not None]),
        ("work", [c.work_could_see for c in cells if c.work_could_see is not None]),
    ):
        seen = [sees for sees in found if not math.isinf(sees)]
        blind = len(found) - len(seen)
        none = f"{blind} cell{'s' * (blind != 1)} in which it could see no change in {currency}"
        if seen:
            parts.append(f"{span(seen)} in {currency}" + (f" ({none})" if blind else ""))
        else:
            parts.append(none if blind else f"nothing in {currency} (no spread to tell by)")
    if len(open_cells) < len(cells):
        parts[0] = f"{parts[0]} in the cells left undecided" if open_cells else "every cell decided in time"
    return (
        "What this run could see: the smallest change it would have called 80 % of the time, from the spread "
        f"of its own rounds and batches, is {parts[0]}, and {parts[1]}."
    )
