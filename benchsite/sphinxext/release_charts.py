"""The charts of a release sweep's section (bench-releases): a line per subject and cell across the releases, and
each release's figure ÷ the newest release's with its simultaneous interval."""

from __future__ import annotations

from docutils import nodes

from benchsite.errors import BenchError
from benchsite.results.releases import Change, Release, reference_release
from benchsite.results.view import RunView
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.nodes import bench_details


def collapsed(summary: str, *content: nodes.Node) -> bench_details:
    """Tables a reader opens on demand (shown in full in the PDF)."""
    details = bench_details(summary=summary)
    for node in content:
        details += node
    return details


def change_chart(view: RunView, releases: list[Release], changes: list[Change], level: str) -> nodes.Node:
    """Each release's figure ÷ the newest release's, with its simultaneous interval: a whisker clear of 1 is
    a real difference."""
    reference = reference_release(view, releases)
    if reference is None:
        raise BenchError(f"{view.run.run_file}: the sweep's reference release is not among its releases")
    older = [release.release for release in releases if release is not reference]
    keys = list(dict.fromkeys((change.subject, change.cell) for change in changes))
    found = {(c.release, c.subject, c.cell): c.ratio for c in changes}
    series = []
    for subject, cell in keys:
        ratios = [found.get((release, subject, cell)) for release in older]
        series.append(
            Series(
                f"{subject}, {view.run.cell_label(cell)}",
                tuple(r.value if r else None for r in ratios),
                tuple(r.low if r else None for r in ratios),
                tuple(r.high if r else None for r in ratios),
            )
        )
    chart = Chart(
        kind="forest",
        title=f"{view.run.title}: each release's req/s ÷ {reference.release}'s, round by round",
        x_label=f"÷ {reference.release}: whiskers are simultaneous intervals (each at {level}); "
        "dashed: no difference; a whisker clear of it is a real difference",
        y_label="",
        categories=tuple(older),
        series=tuple(series),
        thresholds=(1.0,),
        dodge=True,
    )
    return chart_node(chart, "×")


def by_release(view: RunView, releases: list[Release], series: list[Series], title: str, y_label: str) -> Chart:
    """A line per (subject, cell) across the releases, oldest first, its values in the table below it."""
    return Chart(
        kind="line",
        title=f"{view.run.title}: {title}",
        x_label="release, oldest first",
        y_label=y_label,
        categories=tuple(r.release for r in releases),
        series=tuple(series),
        values_in="the table below it",
    )
