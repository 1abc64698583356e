"""``.. bench-forest::``: the chart of what each verdict is decided on, one per claim.

A ratio claim: every run's estimate with its interval, grouped by machine, each machine's pooled
estimate, and the rule's threshold. A fastest claim: on each machine and in each cell, the subject ÷ its
closest competitor (the comparison that decides it), against 1. A keep-alive claim is decided on what
the load tool saw, not on a ratio: a sentence per machine says how many repetitions kept connections.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.results.claims import AnyClaim
from benchsite.results.claims.fastest import FastestClaim
from benchsite.results.claims.keepalive import KeepaliveClaim
from benchsite.results.claims.ratio import RatioClaim
from benchsite.results.evidence import Pooled
from benchsite.results.intervals import Interval
from benchsite.results.machines import MachineRuns
from benchsite.results.metrics import RPS, metric
from benchsite.sphinxext.base import BenchDirective, PublishedDirective, selected
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.history import short_run_name


@dataclass(frozen=True)
class Row:
    """One line of a forest plot: an estimate (None: not estimable) of one run, or of a machine's runs."""

    label: str
    estimate: Interval | None
    pooled: bool


def ratio_rows(claim: RatioClaim, groups: list[MachineRuns]) -> list[Row]:
    """A row per run, then the machine's pooled row, machine by machine."""
    of = metric(claim.metric)
    rows = []
    for group in groups:
        estimated = 0
        for view in group.views:
            found = view.ratio(claim.numerator, claim.denominator, of)
            rows.append(Row(f"{group.label} {short_run_name(view.run.run_id)[:16]}", found, False))
            estimated += found is not None
        if estimated > 1:  # the runs that measured both sides, pooled
            pooled = Pooled(group.views).ratio(claim.numerator, claim.denominator, of)
            rows.append(Row(f"{group.label}, {estimated} runs pooled", pooled, True))
    return rows


def fastest_rows(claim: FastestClaim, groups: list[MachineRuns]) -> list[Row]:
    """Per machine and cell, the subject ÷ its closest competitor there (pooled over the machine's runs)."""
    rows = []
    for group in groups:
        evidence = Pooled(group.views)
        rivals = [r for r in (claim.among or evidence.measured_names()) if r != claim.subject]
        for cell in claim.cells:
            estimates = [
                (rival, found)
                for rival in rivals
                if evidence.ran(rival, cell) and (found := evidence.ratio((claim.subject, cell), (rival, cell)))
            ]
            if not estimates:
                rows.append(Row(f"{group.label} · {cell}", None, len(group.views) > 1))
                continue
            rival, closest = min(estimates, key=lambda pair: pair[1].value)
            rows.append(Row(f"{group.label} · {cell} ÷ {rival}", closest, len(group.views) > 1))
    return rows


def forest(claim: RatioClaim | FastestClaim, groups: list[MachineRuns], title: str) -> Chart | None:
    """A forest plot of one claim (None when no run gives an estimate)."""
    rows = ratio_rows(claim, groups) if isinstance(claim, RatioClaim) else fastest_rows(claim, groups)
    if not any(row.estimate is not None for row in rows):
        return None

    def series(label: str, pooled: bool, colour: int) -> Series:
        chosen = [row.estimate if row.pooled == pooled else None for row in rows]
        return Series(
            label,
            tuple(i.value if i else None for i in chosen),
            tuple(i.low if i else None for i in chosen),
            tuple(i.high if i else None for i in chosen),
            colour=colour,
            reference=pooled,
        )

    levels = sorted({f"{100 * row.estimate.level:.0f}\u00a0%" for row in rows if row.estimate is not None})
    marks = f"dots one run, diamonds a machine's runs pooled, with {' or '.join(levels)} intervals"
    if isinstance(claim, RatioClaim):
        of = metric(claim.metric)
        what = f"{'/'.join(claim.numerator)} ÷ {'/'.join(claim.denominator)}, {of.unit}"
        thresholds = tuple(b for b in (claim.at_least, claim.at_most) if b is not None)
    else:
        what = f"{claim.subject} ÷ its closest competitor in each cell, {RPS.unit}"
        thresholds = (1.0,)
    return Chart(
        kind="forest",
        title=title,
        x_label=f"{what}: {marks}; dashed: the rule, {claim.threshold}",
        y_label="",
        categories=tuple(row.label for row in rows),
        series=(series("one run", False, 0), series("a machine's runs pooled", True, 3)),
        thresholds=thresholds,
    )


def keepalive_evidence(claim: KeepaliveClaim, groups: list[MachineRuns]) -> str:
    """What a keep-alive claim is decided on, machine by machine."""
    parts = []
    for group in groups:
        seen, repetitions = Pooled(group.views).keepalive_seen(claim.subject, claim.cell)
        said = (
            "not measured"
            if not seen
            else "honoured and not, in different repetitions"
            if len(seen) > 1
            else f"{'honoured' if True in seen else 'not honoured'} in all {repetitions} repetitions"
        )
        parts.append(f"{group.label}: {said}")
    return f"{claim.text} Decided on what the load tool reported, not on a ratio: {'; '.join(parts)}."


class BenchForest(PublishedDirective):
    """A forest plot per claim of the page (or the claims named by :claims:)."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "claims": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        groups, published = self.machine_runs(), self.load_published()
        claims: dict[str, AnyClaim] = {claim.id: claim for claim in published.claims}
        wanted = selected(self.options.get("claims"), tuple(claims), "claims", published.path)
        output: list[nodes.Node] = []
        for claim_id in wanted:
            claim = claims[claim_id]
            if isinstance(claim, KeepaliveClaim):
                output.append(nodes.paragraph(text=keepalive_evidence(claim, groups)))
                continue
            chart = forest(claim, groups, claim.text)
            if chart is not None:
                output.append(chart_node(chart, "×"))
        return output
