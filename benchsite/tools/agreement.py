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

# Beyond the printed digits: old ab builds (2.0.40, the Windows build of the Cherokee page) compute in single
# precision and from a time base of their own, and differ from their own printed figures by up to 0.03 %.
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

    @property
    def low(self) -> float:
        return self.value - self.step / 2

    @property
    def high(self) -> float:
        return self.value + self.step / 2


def quotient_agrees(printed: Printed, numerator: Printed, denominator: Printed) -> bool:
    """Whether `printed` can be numerator ÷ denominator, every figure within its printed digits."""
    if numerator.low < 0 or denominator.high <= 0:
        return True  # nothing to check against (an empty run, a time printed as 0)
    lowest = numerator.low / denominator.high
    highest = numerator.high / denominator.low if denominator.low > 0 else math.inf
    slack = RELATIVE_SLACK * max(abs(printed.value), 1.0)
    return printed.low - slack <= highest and printed.high + slack >= lowest


def check_quotient(
    tool: str, error: type[BenchError], said: str, printed: Printed, numerator: Printed, denominator: Printed, how: str
) -> None:
    """Raise the tool's parse error where `printed` is not `numerator` ÷ `denominator` (`how` names them)."""
    if not quotient_agrees(printed, numerator, denominator):
        expected = numerator.value / denominator.value
        raise error(
            f"{tool} output disagrees with itself: {said} {printed.value:.10g} is not {how} "
            f"({numerator.value:.10g} ÷ {denominator.value:.10g} = {expected:.6g}): the report was edited"
        )
