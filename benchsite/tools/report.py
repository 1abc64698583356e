"""What every load tool's parsed report shares: value types with ranges, percentiles, strict building."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import Field, ValidationError

from benchsite.errors import BenchError
from benchsite.model.base import Pair, Record, Seq

# A count of requests, bytes or errors.
Count = Annotated[int, Field(ge=0)]
# A non-negative measured quantity (seconds, milliseconds, bytes per second), finite and below any real run's.
Positive = Annotated[float, Field(ge=0, le=1e12)]
# Requests per second: no machine serves a billion.
Rate = Annotated[float, Field(ge=0, le=1e9)]
# (percent served, milliseconds) pairs, e.g. ((50, 1.0), (99, 4.0), (100, 14.0)).
Percentiles = Seq[Pair[Annotated[int, Field(ge=0, le=100)], Positive]]

R = TypeVar("R", bound=Record)


class ToolReport:
    """Mixin for the result records of ab, wrk and the client programs."""

    percentiles_ms: tuple[tuple[int, float], ...]

    def percentile_ms(self, percent: int) -> float | None:
        """The time within which `percent` % of the requests were served (None: not reported)."""
        return dict(self.percentiles_ms).get(percent)


def build_report(record: type[R], values: dict[str, Any], error: type[BenchError], tool: str) -> R:
    """A result record from parsed values; a value out of range is the tool's parse error, not a traceback."""
    try:
        return record.model_validate(values)
    except ValidationError as problem:
        first = problem.errors()[0]
        where = ".".join(str(step) for step in first["loc"])
        raise error(f"{tool} output has an impossible {where} ({first['input']!r}: {first['msg'].lower()})") from None
