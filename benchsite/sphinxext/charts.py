"""Drawing a chart (matplotlib, Agg backend) as SVG for the web pages, PDF for the other builders."""

from __future__ import annotations

import io
import textwrap
from datetime import datetime, timedelta
from typing import Any, assert_never

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, LogFormatter

from benchsite.sphinxext import chart_layout as layout
from benchsite.sphinxext.chartspec import Chart, Series


def _gap(upper: float | None, lower: float | None) -> float:
    """Length of one whisker (0 where a value is missing)."""
    return 0.0 if upper is None or lower is None else upper - lower


_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _colour(index: int) -> tuple[float, float, float]:
    """Twenty distinct colours: tab20's strong shades first, then its light ones."""
    order = [*range(0, 20, 2), *range(1, 20, 2)]
    red, green, blue, _ = matplotlib.colormaps["tab20"](order[index % 20])
    return red, green, blue


def _positions(chart: Chart) -> list[Any]:
    """Where each category sits on the x axis: its time for a chart over time, else its place."""
    if chart.times:
        return [datetime.fromisoformat(time) for time in chart.times]
    return list(range(len(chart.categories)))


def _draw_lines(axes: plt.Axes, chart: Chart, narrow: bool = False) -> None:
    positions = _positions(chart)
    for index, series in enumerate(chart.series):
        points = [(x, m) for x, m in zip(positions, series.medians, strict=True) if m is not None]
        (line,) = axes.plot(
            [x for x, _ in points],
            [m for _, m in points],
            marker=_MARKERS[index % len(_MARKERS)],
            color=_series_colour(series, index),
            label=series.label,
        )
        failed = [
            x
            for i, (x, m) in enumerate(zip(positions, series.medians, strict=True))
            if m is None and not series.is_absent(i)
        ]
        if failed:
            axes.plot(failed, [0] * len(failed), marker="x", linestyle="none", color=line.get_color(), markersize=8)
        flagged = [
            (x, m)
            for i, (x, m) in enumerate(zip(positions, series.medians, strict=True))
            if m is not None and series.is_flagged(i)
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
    if chart.log_scale:  # values over decades (latency): ticks as plain numbers, 1, 10, 100
        axes.set_yscale("log")
        axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axes.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))  # where a decade is short: 2, 3, 4, 6
    else:
        axes.set_ylim(bottom=0)
    layout.legend(axes, narrow)


def _draw_bars(axes: plt.Axes, chart: Chart, narrow: bool = False) -> None:
    count = len(chart.series)
    width = 0.8 / max(count, 1)
    for index, series in enumerate(chart.series):
        xs = [position + (index - (count - 1) / 2) * width for position in range(len(chart.categories))]
        heights = [0.0 if median is None else median for median in series.medians]
        errors = [
            [_gap(m, lo) for m, lo in zip(series.medians, series.lows, strict=True)],
            [_gap(hi, m) for m, hi in zip(series.medians, series.highs, strict=True)],
        ]
        whiskers = errors if any(v is not None for v in (*series.lows, *series.highs)) else None  # none: no caps
        bars = axes.bar(
            xs, heights, width, yerr=whiskers, capsize=3, label=series.label, color=_series_colour(series, index)
        )
        for position, bar in enumerate(bars):
            if series.is_flagged(position):
                bar.set_hatch("///")
                bar.set_edgecolor("black")
        for position, (x, median) in enumerate(zip(xs, series.medians, strict=True)):
            if median is None and not series.is_absent(position):
                axes.annotate("failed", (x, 0), ha="center", va="bottom", rotation=90, fontsize=8)
        labelled = MAX_LABELLED_BARS // 4 if narrow else MAX_LABELLED_BARS
        if len(chart.categories) * count <= labelled:  # more would meet each other: the table has them
            axes.bar_label(
                bars,
                labels=[
                    "" if m is None else ("≥ " if series.is_busy(i) else "") + f"{m:,.{chart.decimals}f}"
                    for i, m in enumerate(series.medians)
                ],
                fontsize=layout.small(narrow),
                padding=2,
            )
    layout.legend(axes, narrow)
    axes.margins(y=0.15)


def _series_colour(series: Series, index: int) -> tuple[float, float, float]:
    return _colour(series.colour if series.colour >= 0 else index)


def _hbar_reach(chart: Chart) -> float:
    """The largest value any panel draws (bar, whisker or reference line): one scale for every panel."""
    values = [v for s in chart.series for v in (*s.medians, *s.highs) if v is not None]
    return max([*values, 1.0])


def _draw_hbar_panel(axes: plt.Axes, chart: Chart, position: int, reach: float, narrow: bool = False) -> None:
    """One category: a bar per subject that runs there, fastest on top, the interval as a whisker, the value
    past its end."""
    bars = [
        (series, index, series.medians[position])
        for index, series in enumerate(chart.series)
        if not series.reference and not series.is_absent(position)
    ]
    bars.sort(key=lambda item: -1.0 if item[2] is None else item[2], reverse=True)  # the fastest first, failed last
    for row, (series, index, median) in enumerate(bars):
        low, high = series.lows[position], series.highs[position]
        bar = axes.barh(
            row,
            median or 0.0,
            height=0.7,
            color=_series_colour(series, index),
            xerr=[[_gap(median, low)], [_gap(high, median)]] if median is not None else None,
            capsize=2,
            error_kw={"elinewidth": 0.8},
        )[0]
        flagged = series.is_flagged(position)
        if flagged:
            bar.set_hatch("///")
            bar.set_edgecolor("black")
        end = max(v for v in (median, high, 0.0) if v is not None)
        if median is None:
            text = "failed"
        elif series.is_busy(position):
            text = f"at least {median:,.0f}, busy"
        else:
            text = f"{median:,.0f}" + ("  flagged" if flagged else "")
        axes.text(end + reach * 0.01, row, text, va="center", ha="left", fontsize=layout.small(narrow))
    title = chart.categories[position]
    for series in chart.series:
        value = series.medians[position]
        if series.reference and value is not None:
            axes.axvline(value, color="black", linestyle="--", linewidth=0.9)
            title += f"{chr(10) if narrow else '   '}(dashed line: {series.label}, {value:,.0f})"
    labels = [textwrap.fill(series.label, 18) if narrow else series.label for series, _, _ in bars]
    axes.set_yticks(range(len(bars)), labels, fontsize=8)
    axes.set_ylim(len(bars) - 0.3, -0.7)  # the fastest on top
    axes.set_xlim(0, reach * (1.45 if narrow else 1.22))  # room for the value labels
    axes.set_title(layout.wrapped(title, narrow), fontsize=9, loc="left")
    axes.grid(axis="x", alpha=0.3)


def _render_hbars(chart: Chart, narrow: bool = False) -> plt.Figure:
    rows = [
        len([s for s in chart.series if not s.reference and not s.is_absent(p)]) for p in range(len(chart.categories))
    ]
    wrapped = [textwrap.fill(series.label, 18) for series in chart.series]
    per_bar = layout.row_inches(wrapped, 0.22) if narrow else 0.22  # narrow labels wrap onto more lines
    heights = [0.9 + per_bar * count for count in rows]
    figure, panels = plt.subplots(
        len(chart.categories),
        1,
        figsize=(layout.NARROW_INCHES if narrow else layout.WIDE_INCHES, sum(heights) + 0.6),
        layout="constrained",
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    reach = _hbar_reach(chart)
    for position, axes in enumerate(panels[:, 0]):
        _draw_hbar_panel(axes=axes, chart=chart, position=position, reach=reach, narrow=narrow)
    shared = "\n(one scale for every panel)" if len(chart.categories) > 1 else ""
    panels[-1, 0].set_xlabel(layout.wrapped(chart.y_label + shared + _flag_note(chart), narrow))
    figure.suptitle(layout.wrapped(chart.title, narrow), fontsize=10)
    return figure


def render_svg(chart: Chart) -> bytes:
    """Draw the chart as SVG (the web pages); deterministic output for the same input."""
    return render(chart, "svg")


MAX_LABELLED_BARS = 16  # grouped bars that each print their value; beyond, the values are in the table only
MIN_TIME_SPAN = timedelta(hours=2)  # the narrowest x axis of a chart over time
TEXT_PX_PER_CHAR = 7  # a tick label's width per character at 10 pt, roughly
AXES_WIDTH_PX = 480  # the plot's width in a 7.5-inch figure with its legend beside it
NARROW_AXES_WIDTH_PX = 230  # the plot's width in a narrow figure, its y label beside it


def _flag_note(chart: Chart) -> str:
    """A second line under the x-axis label saying how flagged figures look (none when there are none)."""
    if not chart.any_flagged:
        return ""
    marks = "ringed points" if chart.kind == "line" else "hatched bars"
    busy = any(series.is_busy(index) for series in chart.series for index in range(len(chart.categories)))
    also = ",\nor every repetition disturbed: at least, busy" if busy else ""
    return f"\n{marks}: flagged figures\n(failed requests, errors, or limited by the load tool{also})"


FOREST_ROW_INCHES = 0.32


def _render_forest(chart: Chart, narrow: bool = False) -> plt.Figure:
    """One row per category from the top: each series' estimate with its interval as a whisker (a run's as a
    dot, a pooled one as a diamond), with the rule's thresholds as dashed lines."""
    rows = len(chart.categories)
    row_inches = FOREST_ROW_INCHES * (0.75 if chart.dodge else 1.0)  # dodged series need no room of their own
    if narrow:  # its labels wrap onto more lines
        row_inches = max(row_inches, layout.row_inches([textwrap.fill(c, 20) for c in chart.categories], row_inches))
    width = layout.NARROW_INCHES if narrow else layout.WIDE_INCHES
    figure, axes = plt.subplots(figsize=(width, 1.8 + row_inches * rows), layout="constrained")
    positions = list(range(rows - 1, -1, -1))
    spread = 0.7 / max(len(chart.series), 1) if chart.dodge else 0.0
    for index, series in enumerate(chart.series):
        shift = spread * ((len(chart.series) - 1) / 2 - index)
        found = [
            (y + shift, m, lo, hi)
            for y, m, lo, hi in zip(positions, series.medians, series.lows, series.highs, strict=True)
            if m is not None
        ]
        if not found:
            continue
        axes.errorbar(
            [m for _, m, _, _ in found],
            [y for y, _, _, _ in found],
            xerr=[
                [m - (lo if lo is not None else m) for _, m, lo, _ in found],
                [(hi if hi is not None else m) - m for _, m, _, hi in found],
            ],
            fmt="D" if series.reference else "o",
            markersize=8 if series.reference else 5,
            color=_series_colour(series, index),
            capsize=3,
            label=series.label,
        )
    for threshold in chart.thresholds:
        axes.axvline(threshold, linestyle="--", color="black", linewidth=1)
    labels = [textwrap.fill(c, 20) for c in chart.categories] if narrow else list(chart.categories)
    axes.set_yticks(positions, labels, fontsize=8)
    axes.set_ylim(-0.7, rows - 0.3)
    axes.set_xlabel(textwrap.fill(chart.x_label, 40 if narrow else 55))
    axes.set_title(textwrap.fill(chart.title, 40 if narrow else 80), loc="left", fontsize=9)
    axes.grid(axis="x", alpha=0.3)
    if chart.dodge:  # several series in each row: say which colour is which
        layout.legend(axes, narrow)
    return figure


def _time_span(chart: Chart) -> str:
    """The days a chart over time covers, for its axis label: " (2026-11-22 to 2026-11-23)"."""
    if not chart.times:
        return ""
    days = sorted({time[:10] for time in chart.times})
    return f" ({days[0]})" if len(days) == 1 else f" ({days[0]} to {days[-1]})"


STACK_ROW_INCHES = 0.34


def _render_stack(chart: Chart, narrow: bool = False) -> plt.Figure:
    """One horizontal bar per category, top to bottom in the given order, the series' parts end to end (a part
    a category lacks is left out); each part's value printed in it where it is wide enough."""
    rows = len(chart.categories)
    width = layout.NARROW_INCHES if narrow else layout.WIDE_INCHES
    wrapped = [textwrap.fill(c, 18) for c in chart.categories]
    row = layout.row_inches(wrapped, STACK_ROW_INCHES) if narrow else STACK_ROW_INCHES  # narrow labels wrap
    figure, axes = plt.subplots(figsize=(width, 1.4 + row * rows), layout="constrained")
    positions = list(range(rows))[::-1]
    starts = [0.0] * rows
    reach = max([sum(s.medians[i] or 0.0 for s in chart.series) for i in range(rows)] + [1.0])
    for index, series in enumerate(chart.series):
        widths = [value or 0.0 for value in series.medians]
        bars = axes.barh(
            positions, widths, left=starts, height=0.7, label=series.label, color=_series_colour(series, index)
        )
        labels = [f"{w:,.{chart.decimals}f}" if w >= (0.11 if narrow else 0.06) * reach else "" for w in widths]
        axes.bar_label(bars, labels=labels, label_type="center", fontsize=layout.small(narrow), color="white")
        starts = [start + width for start, width in zip(starts, widths, strict=True)]
    labels = [textwrap.fill(c, 18) for c in chart.categories] if narrow else list(chart.categories)
    axes.set_yticks(positions, labels, fontsize=8)
    axes.set_xlabel(layout.wrapped(chart.y_label, narrow))
    axes.set_ylabel(chart.x_label)
    axes.set_title(layout.wrapped(chart.title, narrow), loc="left", fontsize=9)
    axes.grid(axis="x", alpha=0.3)
    columns = min(2, len(chart.series)) if narrow else len(chart.series)
    below = -0.12 - (1.4 if narrow else 0.9) / (1 + rows)
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, below), ncols=columns, fontsize=8)
    return figure


def _label_axes(axes: plt.Axes, chart: Chart, narrow: bool = False) -> None:
    """Ticks, labels, title and grid of a single-panel chart."""
    # Labels that would not fit side by side stand upright, so that none covers another.
    if chart.times:  # dates where they fall, labelled as concisely as their spread allows
        times = [datetime.fromisoformat(time) for time in chart.times]
        span = max(times) - min(times)
        pad = max(span * 0.05, (MIN_TIME_SPAN - span) / 2)  # one run, or runs minutes apart: an hour's room
        axes.set_xlim(float(mdates.date2num(min(times) - pad)), float(mdates.date2num(max(times) + pad)))
        locator = mdates.AutoDateLocator(minticks=2 if narrow else 3, maxticks=4 if narrow else 7)
        axes.xaxis.set_major_locator(locator)
        # the dates the runs span go into the axis label, not into an offset that would meet it
        axes.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, show_offset=False))
    else:
        room = NARROW_AXES_WIDTH_PX if narrow else AXES_WIDTH_PX
        crowded = sum(len(category) + 1 for category in chart.categories) * TEXT_PX_PER_CHAR > room
        axes.set_xticks(
            range(len(chart.categories)),
            chart.categories,
            rotation=90 if crowded else 0,
            fontsize=8 if narrow and crowded else None,
        )
    axes.set_xlabel(layout.wrapped(chart.x_label + _time_span(chart) + _flag_note(chart), narrow))
    axes.set_ylabel(layout.wrapped(chart.y_label, narrow, 30))
    axes.set_title(layout.wrapped(chart.title, narrow), loc="left", fontsize=9)  # from the plot's left edge
    axes.grid(axis="y", alpha=0.3)


def render(chart: Chart, file_format: str, narrow: bool = False) -> bytes:
    """Draw the chart as SVG, PDF (the PDF and LaTeX builds) or PNG; deterministic for the same input. Narrow:
    for a phone's column (legend under the plot, titles wrapped, fewer ticks)."""
    plt.rcdefaults()
    # Deterministic SVG; every label drawn as the text it is (a "$" in a subject's label is no mathtext).
    plt.rcParams.update(
        {"svg.hashsalt": "benchsite", "svg.fonttype": "none", "font.size": 10, "text.parse_math": False}
    )
    figure: plt.Figure | None = None
    try:
        match chart.kind:
            case "hbar":
                figure = _render_hbars(chart, narrow)
            case "forest":
                figure = _render_forest(chart, narrow)
            case "stack":
                figure = _render_stack(chart, narrow)
            case "line" | "bar":
                size = (layout.NARROW_INCHES, layout.narrow_height(chart)) if narrow else (layout.WIDE_INCHES, 3.8)
                figure, axes = plt.subplots(figsize=size, layout="constrained")
                (_draw_lines if chart.kind == "line" else _draw_bars)(axes, chart, narrow)
                _label_axes(axes, chart, narrow)
            case _:
                assert_never(chart.kind)
        buffer = io.BytesIO()
        metadata = {"Date": None} if file_format == "svg" else {"CreationDate": None} if file_format == "pdf" else {}
        # tight: the saved image takes in every text the chart drew (a long title or axis label included)
        figure.savefig(buffer, format=file_format, metadata=metadata, bbox_inches="tight", pad_inches=0.05)
        return buffer.getvalue()
    finally:
        if figure is not None:
            plt.close(figure)
