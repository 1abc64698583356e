"""Charts as SVG (matplotlib, Agg backend), named by a hash of everything that shapes them."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

# The drawing code is part of what shapes a chart: any change to this file redraws them all.
_DRAWING_CODE = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Series:
    """One subject's bars: a median per category, with min and max whiskers."""

    label: str
    medians: tuple[float | None, ...]
    lows: tuple[float | None, ...]
    highs: tuple[float | None, ...]
    flagged: tuple[bool, ...] = ()  # per category: a figure not to take at face value (drawn hatched)

    def is_flagged(self, index: int) -> bool:
        return bool(self.flagged) and self.flagged[index]


@dataclass(frozen=True)
class Chart:
    """Grouped bars (one group per category, one bar per series) or lines (one per series)."""

    kind: str  # "bar" or "line"
    title: str
    x_label: str
    y_label: str
    categories: tuple[str, ...]
    series: tuple[Series, ...]

    def digest(self) -> str:
        """A name for the file: changes whenever the data, options or drawing code change."""
        payload = json.dumps(
            {"chart": asdict(self), "code": _DRAWING_CODE, "matplotlib": matplotlib.__version__},
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    @property
    def any_flagged(self) -> bool:
        return any(series.flagged and any(series.flagged) for series in self.series)

    def alt_text(self, unit: str) -> str:
        """What the chart shows, in words, value by value."""
        parts = []
        for series in self.series:
            values = ", ".join(
                f"{category}: {'failed' if median is None else f'{median:,.0f} {unit}'}"
                + (" (flagged)" if series.is_flagged(index) else "")
                for index, (category, median) in enumerate(zip(self.categories, series.medians, strict=True))
            )
            parts.append(f"{series.label} ({values})")
        shape = "Bar chart" if self.kind == "bar" else "Line chart"
        return f"{shape} of {self.y_label} against {self.x_label}. " + "; ".join(parts) + "."


def _gap(upper: float | None, lower: float | None) -> float:
    """Length of one whisker (0 where a value is missing)."""
    return 0.0 if upper is None or lower is None else upper - lower


_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _colour(index: int) -> tuple[float, float, float]:
    """Twenty distinct colours: tab20's strong shades first, then its light ones."""
    order = [*range(0, 20, 2), *range(1, 20, 2)]
    red, green, blue, _ = matplotlib.colormaps["tab20"](order[index % 20])
    return red, green, blue


def _draw_lines(axes: plt.Axes, chart: Chart) -> None:
    positions = range(len(chart.categories))
    for index, series in enumerate(chart.series):
        points = [(x, m) for x, m in zip(positions, series.medians, strict=True) if m is not None]
        (line,) = axes.plot(
            [x for x, _ in points],
            [m for _, m in points],
            marker=_MARKERS[index % len(_MARKERS)],
            color=_colour(index),
            label=series.label,
        )
        failed = [x for x, m in zip(positions, series.medians, strict=True) if m is None]
        if failed:
            axes.plot(failed, [0] * len(failed), marker="x", linestyle="none", color=line.get_color(), markersize=8)
        flagged = [
            (x, m) for x, m in zip(positions, series.medians, strict=True) if m is not None and series.is_flagged(x)
        ]
        if flagged:  # a ring around each flagged point
            axes.plot(
                [x for x, _ in flagged],
                [m for _, m in flagged],
                marker="o",
                linestyle="none",
                markersize=12,
                markerfacecolor="none",
                markeredgecolor="black",
            )
    axes.set_ylim(bottom=0)
    axes.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)


def _draw_bars(axes: plt.Axes, chart: Chart) -> None:
    count = len(chart.series)
    width = 0.8 / max(count, 1)
    for index, series in enumerate(chart.series):
        xs = [position + (index - (count - 1) / 2) * width for position in range(len(chart.categories))]
        heights = [0.0 if median is None else median for median in series.medians]
        errors = [
            [_gap(m, lo) for m, lo in zip(series.medians, series.lows, strict=True)],
            [_gap(hi, m) for m, hi in zip(series.medians, series.highs, strict=True)],
        ]
        bars = axes.bar(xs, heights, width, yerr=errors, capsize=3, label=series.label, color=_colour(index))
        for position, bar in enumerate(bars):
            if series.is_flagged(position):
                bar.set_hatch("///")
                bar.set_edgecolor("black")
        for x, median in zip(xs, series.medians, strict=True):
            if median is None:
                axes.annotate("failed", (x, 0), ha="center", va="bottom", rotation=90, fontsize=8)
        axes.bar_label(
            bars, labels=[f"{m:,.0f}" if m is not None else "" for m in series.medians], fontsize=7, padding=2
        )
    if count > 3:  # many bars: keep the legend off them
        axes.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    else:
        axes.legend(loc="upper left", fontsize=8)
    axes.margins(y=0.15)


def render_svg(chart: Chart) -> bytes:
    """Draw the chart; deterministic output for the same input."""
    plt.rcdefaults()
    plt.rcParams.update({"svg.hashsalt": "benchsite", "svg.fonttype": "none", "font.size": 10})
    figure, axes = plt.subplots(figsize=(7.5, 3.8), layout="constrained")
    try:
        if chart.kind == "line":
            _draw_lines(axes, chart)
        else:
            _draw_bars(axes, chart)
        many = len(chart.categories) > 6
        axes.set_xticks(
            range(len(chart.categories)), chart.categories, rotation=30 if many else 0, ha="right" if many else "center"
        )
        axes.set_xlabel(chart.x_label)
        axes.set_ylabel(chart.y_label)
        axes.set_title(chart.title)
        if chart.any_flagged:
            marks = "hatched bars" if chart.kind == "bar" else "ringed points"
            figure.text(
                0.01,
                0.01,
                f"{marks}: flagged figures (failed requests, errors, or at the load tool's ceiling)",
                fontsize=7,
                ha="left",
                va="bottom",
            )
        axes.grid(axis="y", alpha=0.3)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
        return buffer.getvalue()
    finally:
        plt.close(figure)
