"""What a chart shows (its series, categories and labels) and the name of its file; drawing is in charts.py.

Kept apart from the drawing code so that building pages never imports matplotlib unless a chart
must be drawn: a chart's file is named by a digest of its data, its drawing code and matplotlib's
version, and reused while that digest stays the same.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal, get_args

# The drawing code is part of what shapes a chart: any change to charts.py or chart_layout.py redraws them all.
_DRAWING_CODE = hashlib.sha256(
    b"".join((Path(__file__).parent / name).read_bytes() for name in ("charts.py", "chart_layout.py"))
).hexdigest()
_MATPLOTLIB = metadata.version("matplotlib")


# grouped bars; one sorted panel per category; lines; a forest plot (one row per category, estimates
# with their intervals against the thresholds); stacked horizontal bars (one row per category, the series
# its parts end to end)
ChartKind = Literal["bar", "hbar", "line", "forest", "stack"]
ALT_MAX = 300  # characters of alt text: a screen reader reads it whole
CHART_KINDS: tuple[str, ...] = get_args(ChartKind)
_SHAPES: dict[ChartKind, str] = {
    "bar": "Bar chart",
    "hbar": "Sorted bar chart",
    "line": "Line chart",
    "forest": "Forest plot",
    "stack": "Stacked bar chart",
}


@dataclass(frozen=True)
class Series:
    """One subject's bars: a median per category, with min and max whiskers."""

    label: str
    medians: tuple[float | None, ...]
    lows: tuple[float | None, ...]
    highs: tuple[float | None, ...]
    flagged: tuple[bool, ...] = ()  # per category: a figure not to take at face value (drawn hatched)
    colour: int = -1  # the subject's place in its run: one colour per subject on every chart of a page
    reference: bool = False  # the load tool's ceiling: a line across the bars, not a bar
    absent: tuple[bool, ...] = ()  # per category: the subject does not run there (drawn as nothing, not failed)
    busy: tuple[bool, ...] = ()  # per category: every repetition disturbed: its median is a lower bound ("at least")

    def is_busy(self, index: int) -> bool:
        return bool(self.busy) and self.busy[index]

    def is_flagged(self, index: int) -> bool:
        return bool(self.flagged) and self.flagged[index]

    def is_absent(self, index: int) -> bool:
        return bool(self.absent) and self.absent[index]


@dataclass(frozen=True)
class Chart:
    """Grouped bars (one group per category, one bar per series) or lines (one per series)."""

    kind: ChartKind
    title: str
    x_label: str
    y_label: str
    categories: tuple[str, ...]
    series: tuple[Series, ...]
    thresholds: tuple[float, ...] = ()  # a forest plot's rule: dashed lines the intervals must clear
    times: tuple[str, ...] = ()  # a line chart over time: each category's UTC time (ISO 8601), spaced by date
    decimals: int = 0  # of the values printed on the bars (2 for ratios)
    values_in: str = "the results table"  # where a reader finds every value the chart draws
    dodge: bool = False  # a forest plot whose series share rows: each drawn a little apart within its row
    log_scale: bool = False  # a line chart whose values span decades (latency): a logarithmic value axis

    def digest(self) -> str:
        """A name for the file: changes whenever the data, options or drawing code change."""
        payload = json.dumps(
            {"chart": asdict(self), "code": _DRAWING_CODE, "matplotlib": _MATPLOTLIB},
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    @property
    def any_flagged(self) -> bool:
        return any(series.flagged and any(series.flagged) for series in self.series)

    def alt_text(self, unit: str) -> str:
        """What the chart shows, in words: value by value where that is short, else what it plots and where
        the values are (at most ALT_MAX characters)."""
        full = self._values_text(unit)
        if len(full) <= ALT_MAX:
            return full
        shape, label = _SHAPES[self.kind], self.y_label.replace("\n", " ")
        if self.kind == "forest":
            what = self.x_label.split(":")[0]
            rule = f" against the rule ({', '.join(f'{t:g}' for t in self.thresholds)})" if self.thresholds else ""
            short = f"{shape} of {what}: {len(self.categories)} estimates with their intervals{rule}; the verdicts "
            short += "table gives each machine's."
        else:
            names = ", ".join(series.label for series in self.series)
            short = f"{shape} of {label} against {self.x_label} for {names}; every value is in {self.values_in}."
            if len(short) > ALT_MAX:
                short = (
                    f"{shape} of {label} against {self.x_label} for {len(self.series)} subjects; every value is in "
                    f"{self.values_in}."
                )
        return textwrap.shorten(short, ALT_MAX, placeholder="…")

    def _values_text(self, unit: str) -> str:
        """What the chart shows, in words, value by value."""
        shape = _SHAPES[self.kind]
        label = self.y_label.replace("\n", " ")
        if self.kind == "forest":  # each row has its value in one series
            rows = [
                f"{category}: {median:.2f} [{low:.2f}–{high:.2f}]"
                if low is not None and high is not None
                else f"{category}: {median:.2f}"
                for series in self.series
                for category, median, low, high in zip(
                    self.categories, series.medians, series.lows, series.highs, strict=True
                )
                if median is not None
            ]
            rule = f" The rule: {', '.join(f'{t:g}' for t in self.thresholds)}." if self.thresholds else ""
            return f"{shape} of {self.x_label}. " + "; ".join(rows) + "." + rule
        parts = []
        for series in self.series:
            values = ", ".join(
                f"{category}: "
                + (
                    "failed"
                    if median is None
                    else f"at least {median:,.0f} {unit}, busy"
                    if series.is_busy(index)
                    else f"{median:,.0f} {unit}"
                )
                + (" (flagged)" if series.is_flagged(index) and not series.is_busy(index) else "")
                for index, (category, median) in enumerate(zip(self.categories, series.medians, strict=True))
            )
            parts.append(f"{series.label} ({values})")
        return f"{shape} of {label} against {self.x_label}. " + "; ".join(parts) + "."
