"""A ratio claim's verdict in a plain sentence: which way the measured ratio goes and how surely, whether
that is the claimed direction, and where its size stands against the claimed size (less than claimed, as
claimed, more than claimed, or not settled), with the interval as factors."""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.results.claims.base import Badge
from benchsite.results.factors import Direction, factor, factor_range, times
from benchsite.results.intervals import Interval


@dataclass(frozen=True)
class Band:
    """A claim's bounds on a ratio, and the direction they claim: up (the ratio above 1), down (below 1),
    or none (a bound on both sides of 1, or a ceiling above 1: "no more than 1.2×")."""

    at_least: float | None
    at_most: float | None

    @property
    def direction(self) -> int:
        if self.at_least is not None and self.at_least >= 1:
            return 1
        if self.at_most is not None and self.at_most <= 1:
            return -1
        return 0

    @property
    def sized(self) -> bool:
        """Whether it claims a size beyond its direction ("at least 1.5×", not only "faster")."""
        bounds = [b for b in (self.at_least, self.at_most) if b is not None]
        return self.direction == 0 or any(b != 1 for b in bounds)

    def claimed(self, words: Direction) -> str:
        """The claimed size as factors: "at least 2.50× faster", "3.00× to 10.0× more CPU per request"."""
        low, high = self.at_least, self.at_most
        if self.direction < 0:  # "at most 0.5" reads "at least 2× slower"
            low, high = (1 / high if high else None), (1 / low if low else None)
            word = words.less
        else:
            word = words.more
        if low is not None and high is not None:
            return f"{times(low)} to {times(high)} {word}"
        if low is not None:
            return f"at least {times(low)} {word}"
        assert high is not None
        return f"at most {times(high)} {word}"


def _side(interval: Interval) -> int:
    """1: surely above 1, -1: surely below, 0: not settled."""
    assert interval.low is not None and interval.high is not None
    return 1 if interval.low > 1 else -1 if interval.high < 1 else 0


def measured(interval: Interval, top: str, bottom: str, words: Direction) -> str:
    """ "Cherokee is 1.10× faster than Apache (from 1.23× slower to 1.50× faster): whether it is faster at all
    is not settled"; or "WsgiBoostServer is surely faster than Waitress: 1.53× (1.45× to 1.61×)"."""
    side = _side(interval)
    if side == 0:
        return f"{words.either(top, bottom)} is not settled (95 %: {factor_range(interval, words)})"
    value = interval.value if side > 0 else 1 / interval.value
    spans = factor_range(interval, words, worded=False)
    return f"{words.surely(top, side > 0, bottom)}: {times(value)} (95 %: {spans})"


def size_against(interval: Interval, band: Band) -> str:
    """Where the interval stands against the claimed band, from the claim's side: "as claimed", "less than
    claimed", "more than claimed", or what is not settled ("at least as claimed, perhaps more")."""
    assert interval.low is not None and interval.high is not None
    low, high = interval.low, interval.high
    floor, ceiling = band.at_least, band.at_most
    below = floor is not None and high < floor
    above = ceiling is not None and low > ceiling
    reaches_floor = floor is None or low >= floor
    under_ceiling = ceiling is None or high <= ceiling
    # "less" and "more" are said along the claim's direction: for a claim of "slower", a ratio further below 1
    # is more of what it claims
    smaller, larger = ("more", "less") if band.direction < 0 else ("less", "more")
    if below:
        return f"{smaller} than claimed"
    if above:
        return f"{larger} than claimed"
    if reaches_floor and under_ceiling:
        return "as claimed"
    if reaches_floor:  # above the floor, straddling the ceiling
        return f"as claimed or {larger}, not settled"
    if under_ceiling:
        return f"as claimed or {smaller}, not settled"
    return "not settled either way"


def direction_against(interval: Interval, band: Band) -> str:
    """Which way the interval goes against the claimed direction: "as claimed", "the opposite of the claim",
    or "not settled" (a claim without a direction: "as claimed" whichever way it goes)."""
    side = _side(interval)
    if band.direction == 0:
        return "as claimed"
    return "not settled" if side == 0 else "as claimed" if side == band.direction else "the opposite of the claim"


def ratio_reading(interval: Interval | None, band: Band, top: str, bottom: str, words: Direction) -> str:
    """The whole reading: what was measured, then "Direction: …" and "Size: …" against the claim's."""
    if interval is None:
        return ""
    if not interval.bounded:
        return f"{top} against {bottom}: {factor(interval.value, words)} from one round, no interval: nothing settled."
    parts = [measured(interval, top, bottom, words) + "."]
    claimed = band.direction
    direction = direction_against(interval, band)
    size = size_against(interval, band) if band.sized else ""
    if claimed != 0 and direction == size == "as claimed":
        parts.append(f"Direction and size as claimed ({band.claimed(words)}).")
        return " ".join(parts)
    if claimed != 0:
        parts.append(f"Direction: {direction}.")
    if band.sized:
        parts.append(f"Size: {size} (claimed: {band.claimed(words)}).")
    return " ".join(parts)


def ratio_badge(interval: Interval, band: Band) -> Badge:
    """A ratio's badge: its direction against the claim's, then its size."""
    if not interval.bounded:
        return Badge.NOT_SETTLED
    direction = direction_against(interval, band)
    if direction == "the opposite of the claim":
        return Badge.OPPOSITE
    size = size_against(interval, band) if band.sized else "as claimed"
    if direction == "not settled":  # which way is open; a claimed size the whole interval falls short of fails
        return Badge.SHORT if size == "less than claimed" else Badge.NOT_SETTLED
    if band.direction == 0:  # no direction claimed: the band is all there is
        return (
            Badge.AS_CLAIMED
            if size == "as claimed"
            else Badge.NOT_SETTLED
            if "settled" in size
            else Badge.NOT_AS_CLAIMED
        )
    if size == "as claimed":
        return Badge.AS_CLAIMED
    if size == "more than claimed":
        return Badge.BEYOND
    if size == "as claimed or more, not settled":
        return Badge.AT_LEAST
    if size == "less than claimed":
        return Badge.WEAKER
    return Badge.DIRECTION_ONLY
