"""Whether a report agrees with itself: a rate it prints against the count and the time it prints.

Each printed figure is known only to its last digit ("2.414" is somewhere in [2.4135, 2.4145]), so a
quotient is checked by interval arithmetic over that rounding, and RELATIVE_SLACK beside it: a report is
consistent where some values within the printed digits give the printed rate. An edited figure lands
outside; ab's, wrk's and h2load's own reports land inside.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from benchsite.errors import BenchError

# Beyond the printed digits: wrk and h2load compute from clocks of their own and print rounded figures of
# them; ab's arithmetic is known exactly (tools/ab_arithmetic.py) and needs only single precision's.
RELATIVE_SLACK = 0.001


@dataclass(frozen=True)
class Printed:
    """A figure as a report printed it: its value and the unit of its last digit (0 for an exact count)."""

    value: float
    step: float = 0.0

    @classmethod
    def of(cls, text: str, unit: float = 1.0) -> Printed:
        """ "2.414" -> 2.414 ± 0.0005; `unit` scales a figure printed in KB, ms, ..."""
        decimals = len(text.partition(".")[2])
        return cls(float(text) * unit, unit * 10.0**-decimals)

    def scaled(self, factor: float) -> Printed:
        return Printed(self.value * factor, self.step * abs(factor))

    @property
    def low(self) -> float:
        return self.value - self.step / 2

    @property
    def high(self) -> float:
        return self.value + self.step / 2


def quotient_agrees(printed: Printed, numerator: Printed, denominator: Printed, slack: float = RELATIVE_SLACK) -> bool:
    """Whether `printed` can be numerator ÷ denominator, every figure within its printed digits and `slack`
    (relative) beside them."""
    if numerator.low < 0 or denominator.high <= 0:
        return True  # nothing to check against (an empty run, a time printed as 0)
    lowest = numerator.low / denominator.high
    highest = numerator.high / denominator.low if denominator.low > 0 else math.inf
    room = slack * max(abs(printed.value), 1.0)
    return printed.low - room <= highest and printed.high + room >= lowest


def disagreement(said: str, printed: Printed, numerator: Printed, denominator: Printed, how: str) -> str:
    """Which figures disagree and by how much: "Requests per second 828.38 is not Complete requests ÷ Time
    taken (1000 ÷ 2.414 = 414.25, 100 % more)"."""
    expected = numerator.value / denominator.value
    if expected:
        off = f"{100 * abs(printed.value / expected - 1):.3g} % {'more' if printed.value > expected else 'less'}"
    else:
        off = "not 0"
    return (
        f"{said} {printed.value:.10g} is not {how} "
        f"({numerator.value:.10g} ÷ {denominator.value:.10g} = {expected:.6g}, {off})"
    )


def check_quotient(
    tool: str, error: type[BenchError], said: str, printed: Printed, numerator: Printed, denominator: Printed, how: str
) -> None:
    """Raise the tool's parse error where `printed` is not `numerator` ÷ `denominator` (`how` names them)."""
    if not quotient_agrees(printed, numerator, denominator):
        why = disagreement(said=said, printed=printed, numerator=numerator, denominator=denominator, how=how)
        raise error(f"{tool} output disagrees with itself: {why}")
