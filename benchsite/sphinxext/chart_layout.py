"""How a chart is laid out for its width: a page's column, or a phone's (the narrow drawing), its legend placed
and its texts wrapped and sized to stay readable there."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt

from benchsite.sphinxext.chartspec import Chart

WIDE_INCHES, NARROW_INCHES = 7.5, 3.5  # a chart in a page's column; the same chart on a phone (368 px there)
NARROW_TITLE_CHARS = 46  # a narrow chart's title and axis labels wrap at this many characters


def row_inches(labels: list[str], least: float) -> float:
    """A row's height for tick labels of this many lines at 8 points (a narrow chart wraps them)."""
    lines = max((label.count("\n") + 1 for label in labels), default=1)
    return max(least, 0.14 * lines + 0.1)


def small(narrow: bool) -> int:
    """The smallest text's size in points: 7 on a wide chart (9.3 px at its own size), 8 on a narrow one, which a
    phone may shrink by up to a sixth and still show at 9 px."""
    return 8 if narrow else 7


def narrow_height(chart: Chart) -> float:
    """A narrow line or bar chart's height: the plot's own, then its legend's rows (two entries a row) and its
    flag note under it."""
    legend_rows = -(-len(chart.series) // legend_columns([series.label for series in chart.series]))
    return 3.0 + 0.17 * legend_rows + (0.5 if chart.any_flagged else 0.0)


def legend_columns(labels: list[str]) -> int:
    """Two columns of a narrow legend where its labels are short enough to stand side by side, else one."""
    return 2 if max((len(label) for label in labels), default=0) <= NARROW_LEGEND_CHARS else 1


NARROW_LEGEND_CHARS = 22  # a narrow legend's longest label that still fits beside another


def legend(axes: plt.Axes, narrow: bool) -> None:
    """Beside the plot on a wide chart, off the bars; under it on a narrow one, so that it stays on screen."""
    if narrow:  # the figure's, under everything the axes drew (labels and notes included)
        handles, labels = axes.get_legend_handles_labels()
        columns = legend_columns(labels)
        axes.figure.legend(handles, labels, loc="outside lower center", fontsize=small(narrow), ncols=columns)
    else:
        axes.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)


def wrapped(text: str, narrow: bool, width: int = NARROW_TITLE_CHARS) -> str:
    """A title or label as a narrow chart prints it: each of its lines wrapped (a wide chart's as given)."""
    if not narrow:
        return text
    return "\n".join(textwrap.fill(line, width) if line else line for line in text.split("\n"))
