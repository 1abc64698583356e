"""What the charts draw: flagged figures with their numbers, absent cells as nothing, panels on one scale, runs by
date (fixed inputs; the drawing is matplotlib's)."""

from __future__ import annotations

import itertools
import re

import matplotlib.dates as mdates
import matplotlib.pyplot as plt

from benchsite.sphinxext.charts import _draw_lines, _label_axes, _render_hbars, render_svg
from benchsite.sphinxext.chartspec import Chart, Series

FAST = Series("fast", (2000.0, 9000.0), (1900.0, 8800.0), (2100.0, 9100.0))
FLAGGED = Series("flagged", (700.0, 650.0), (600.0, 600.0), (800.0, 700.0), flagged=(False, True))
QUEUED = Series("queued", (None, 1234.0), (None, 1200.0), (None, 1300.0), absent=(True, False))


def bars(*series: Series) -> Chart:
    return Chart("hbar", "t", "load setting", "median req/s", ("-c 1", "-c 10"), series)


def test_panels_share_one_scale() -> None:
    figure = _render_hbars(bars(FAST, FLAGGED, QUEUED))
    try:
        limits = {axes.get_xlim() for axes in figure.axes}
        assert len(limits) == 1 and limits.pop()[1] > 9100.0
        assert "one scale for every panel" in figure.axes[-1].get_xlabel()
    finally:
        plt.close(figure)


def test_a_flagged_figure_keeps_its_number_and_an_absent_cell_is_not_a_failure() -> None:
    texts = re.findall(r"<text[^>]*>([^<]*)<", render_svg(bars(FAST, FLAGGED, QUEUED)).decode())
    assert "650  flagged" in texts and "1,234" in texts
    assert "failed" not in texts
    figure = _render_hbars(bars(FAST, FLAGGED, QUEUED))
    try:  # -c 1 has no "queued" row at all; -c 10 has all three
        assert [len(axes.get_yticks()) for axes in figure.axes] == [2, 3]
    finally:
        plt.close(figure)
    missing = Series("missing", (None, 500.0), (None, 450.0), (None, 550.0))
    texts = re.findall(r"<text[^>]*>([^<]*)<", render_svg(bars(FAST, missing)).decode())
    assert "failed" in texts  # no figure where it ran: that is a failure


def test_runs_are_placed_by_their_date() -> None:
    times = ("2026-11-22T02:38:28+00:00", "2026-11-22T19:37:00+00:00", "2026-11-23T02:04:52+00:00")
    chart = Chart(
        "line",
        "history",
        "date of the run (UTC)",
        "median req/s",
        ("11-22 02:38", "11-22 19:37", "11-23 02:04"),
        (Series("s", (1.0, 2.0, 3.0), (1.0, 2.0, 3.0), (1.0, 2.0, 3.0)),),
        times=times,
    )
    figure, axes = plt.subplots()
    try:
        _draw_lines(axes, chart)
        _label_axes(axes, chart)
        xs = list(mdates.date2num(axes.get_lines()[0].get_xdata()))
        hours = [(b - a) * 24 for a, b in itertools.pairwise(xs)]
        assert [round(h, 2) for h in hours] == [16.98, 6.46]  # spaced by the time between the runs
        assert isinstance(axes.xaxis.get_major_formatter(), mdates.ConciseDateFormatter)
    finally:
        plt.close(figure)
    assert "11-22 02:38" not in render_svg(chart).decode()  # no run-id ticks
