"""``.. bench-forest::``: the chart of what each verdict is decided on. For each ratio claim, every run's
estimate with its interval, grouped by machine, each machine's pooled estimate, and the rule's threshold."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.results.claims.ratio import RatioClaim
from benchsite.results.evidence import Pooled
from benchsite.results.intervals import Interval
from benchsite.results.machines import MachineRuns
from benchsite.results.metrics import metric
from benchsite.sphinxext.base import BenchDirective, PublishedDirective, selected
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.history import short_run_name


def forest(claim: RatioClaim, groups: list[MachineRuns], title: str) -> Chart | None:
    """A forest plot of one ratio claim: a row per run, then the machine's pooled row, machine by machine."""
    of = metric(claim.metric)
    rows: list[tuple[str, Interval | None, bool]] = []  # label, estimate, pooled?
    for group in groups:
        for view in group.views:
            found = view.ratio(claim.numerator, claim.denominator, of)
            rows.append((f"{group.label} {short_run_name(view.run.run_id)[:16]}", found, False))
        if len(group.views) > 1:
            pooled = Pooled(group.views).ratio(claim.numerator, claim.denominator, of)
            rows.append((f"{group.label}, {len(group.views)} runs pooled", pooled, True))
    if not any(found is not None for _, found, _ in rows):
        return None

    def series(label: str, pooled: bool, colour: int) -> Series:
        chosen = [found if is_pooled == pooled else None for _, found, is_pooled in rows]
        return Series(
            label,
            tuple(i.value if i else None for i in chosen),
            tuple(i.low if i else None for i in chosen),
            tuple(i.high if i else None for i in chosen),
            colour=colour,
            reference=pooled,
        )

    thresholds = tuple(b for b in (claim.at_least, claim.at_most) if b is not None)
    return Chart(
        kind="forest",
        title=title,
        x_label=f"{'/'.join(claim.numerator)} ÷ {'/'.join(claim.denominator)}, {of.unit}: dots one run, "
        f"diamonds a machine's runs pooled, with 95 % intervals; dashed: the rule, {claim.threshold}",
        y_label="",
        categories=tuple(label for label, _, _ in rows),
        series=(series("one run", False, 0), series("a machine's runs pooled", True, 3)),
        thresholds=thresholds,
    )


class BenchForest(PublishedDirective):
    """A forest plot per ratio claim of the page (or the claims named by :claims:)."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "claims": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        groups, published = self.machine_runs(), self.load_published()
        ratios = {claim.id: claim for claim in published.claims if isinstance(claim, RatioClaim)}
        wanted = selected(self.options.get("claims"), tuple(ratios), "ratio claims", published.path)
        output: list[nodes.Node] = []
        for claim_id in wanted:
            claim = ratios[claim_id]
            chart = forest(claim, groups, claim.text)
            if chart is not None:
                output.append(chart_node(chart, "×"))
        return output
