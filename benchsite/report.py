"""What every load tool's parsed report shares: its percentile table and a JSON round trip."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, ClassVar


class ToolReport:
    """Mixin for the frozen result dataclasses of ab and wrk."""

    tool: ClassVar[str]
    percentiles_ms: tuple[tuple[int, float], ...]

    def percentile_ms(self, percent: int) -> float:
        """The time within which `percent` % of the requests were served."""
        for served_percent, ms in self.percentiles_ms:
            if served_percent == percent:
                return ms
        raise KeyError(f"{self.tool} reported no {percent}% percentile")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict tagged with the tool (see each class's `from_dict`)."""
        data = asdict(self)  # type: ignore[call-overload]
        data["percentiles_ms"] = [list(pair) for pair in self.percentiles_ms]
        data["tool"] = self.tool
        return data


def percentiles_from_json(pairs: list[list[float]]) -> tuple[tuple[int, float], ...]:
    return tuple((int(percent), float(ms)) for percent, ms in pairs)
