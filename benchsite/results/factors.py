"""Ratios in words, as every page and the terminal write them: "1.25× faster", "580× slower", never
"0.00173×" or "-99.3 %" for a change a reader should see as a factor."""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.results.intervals import Interval


def times(factor: float) -> str:
    """A factor ≥ 1 with the digits its size needs: 1.25×, 14.3×, 580×."""
    if factor >= 100:
        return f"{factor:,.0f}×"
    return f"{factor:.1f}×" if factor >= 10 else f"{factor:.2f}×"


@dataclass(frozen=True)
class Direction:
    """The two words a ratio above and below 1 is said with: ("faster", "slower") for req/s."""

    more: str
    less: str
    verb: str = "is"  # "requests needs more CPU per request than pycurl"

    def surely(self, top: str, above: bool, bottom: str) -> str:
        """ "Fapws3 is surely faster than Tornado", "requests surely needs more CPU per request than pycurl"."""
        word = self.more if above else self.less
        said = f"is surely {word}" if self.verb == "is" else f"surely {self.verb} {word}"
        return f"{top} {said} than {bottom}"

    def either(self, top: str, bottom: str) -> str:
        """ "whether Cherokee is faster or slower than Apache"."""
        return f"whether {top} {self.verb} {self.more} or {self.less} than {bottom}"


FASTER = Direction("faster", "slower")
MORE_CPU = Direction("more CPU per request", "less CPU per request", "needs")
MORE_INSTRUCTIONS = Direction(
    "more instructions per request (slower)", "fewer instructions per request (faster)", "executes"
)


def factor(ratio: float, words: Direction = FASTER) -> str:
    """One ratio as a factor: 1.25 → "1.25× faster", 0.00173 → "578× slower", 1 → "1.00× (the same)"."""
    if ratio > 1:
        return f"{times(ratio)} {words.more}"
    if ratio < 1:
        return f"{times(1 / ratio)} {words.less}" if ratio > 0 else f"infinitely {words.less}"
    return "1.00× (the same)"


def factor_range(interval: Interval, words: Direction = FASTER, worded: bool = True) -> str:
    """Where an interval lies, as factors: "1.45× to 1.61× faster", "395× to 847× slower", or, where it spans
    1, "from 1.23× slower to 1.50× faster"; a single value where it has no interval. `worded=False` leaves
    out the word of a range on one side of 1 (where the estimate before it says it)."""
    if interval.low is None or interval.high is None:
        return factor(interval.value, words)
    low, high = interval.low, interval.high
    if low > 1:
        return f"{times(low)} to {times(high)}" + (f" {words.more}" if worded else "")
    if high < 1:
        if low <= 0:
            return f"over {times(1 / high)}" + (f" {words.less}" if worded else "")
        return f"{times(1 / high)} to {times(1 / low)}" + (f" {words.less}" if worded else "")
    return f"from {factor(low, words)} to {factor(high, words)}"


def fmt_level(interval: Interval) -> str:
    """An interval's own confidence: "95 %", or "99.9 %" for one of a set held together (simultaneous)."""
    return f"{100 * interval.level:.3g} %"


def with_range(interval: Interval, words: Direction = FASTER) -> str:
    """The estimate and its interval as factors at the interval's own level: "1.53× faster (95 %: 1.45× to
    1.61×)", "600× slower (99.9 %: 143× to 2,523×)"."""
    if interval.low is None or interval.high is None:
        return f"{factor(interval.value, words)} (no interval)"
    return f"{factor(interval.value, words)} ({fmt_level(interval)}: {factor_range(interval, words, worded=False)})"


def percent(ratio: float, words: Direction = FASTER) -> str:
    """A small change in percent, in words: 0.952 → "4.8 % slower", 1.02 → "2.0 % faster", 1 → "no change"."""
    if ratio > 1:
        return f"{100 * (ratio - 1):.1f} % {words.more}"
    if ratio < 1:
        return f"{100 * (1 - ratio):.1f} % {words.less}"
    return "no change"


def percent_range(interval: Interval, words: Direction = FASTER, worded: bool = True) -> str:
    """Where an interval lies, in percent: "3.5 % to 6.1 % slower", or, where it spans no change, "from 10.1 %
    slower to 8.2 % faster". `worded=False` leaves out the word of a range on one side of no change (where the
    estimate before it says it)."""
    low, high = interval.low, interval.high
    if low is None or high is None:
        return percent(interval.value, words)
    if low > 1:
        return f"{100 * (low - 1):.1f} % to {100 * (high - 1):.1f} %" + (f" {words.more}" if worded else "")
    if high < 1:
        return f"{100 * (1 - high):.1f} % to {100 * (1 - low):.1f} %" + (f" {words.less}" if worded else "")
    return f"from {percent(low, words)} to {percent(high, words)}"


def percent_or_factor(ratio: float, words: Direction = FASTER) -> str:
    """A change in percent where it is small (within ±50 %: "3.1 % faster", "12.0 % slower"), as a factor beyond
    ("143× slower", "2.10× faster"): a terminal line a reader takes in at a glance."""
    if 2 / 3 <= ratio <= 1.5:
        return percent(ratio, words)
    return factor(ratio, words)
