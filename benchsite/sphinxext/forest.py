"""``.. bench-forest::``: the chart of what each verdict is decided on, one per claim.

Each claim kind says what its verdicts rest on (`ClaimBase.evidence`): a ratio claim, every run's estimate
with its interval, grouped by machine, each machine's pooled estimate, and the rule's threshold; a fastest
claim, the subject ÷ its closest competitor on each machine and in each cell, against 1; a keep-alive claim,
decided on what the load tool saw, a sentence per machine. This module only draws.
"""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.results.claims import AnyClaim
from benchsite.results.claims.base import Forest, MachineEvidence
from benchsite.results.machines import MachineRuns
from benchsite.sphinxext.base import BenchDirective, PublishedDirective, selected
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series


def machine_evidence(groups: list[MachineRuns]) -> list[MachineEvidence]:
    return [MachineEvidence(group.label, group.views) for group in groups]


def forest(claim: AnyClaim, groups: list[MachineRuns], title: str) -> Chart | str | None:
    """A forest plot of one claim, the sentence of a claim not decided on a ratio, or None when no run gives an
    estimate."""
    found = claim.evidence(machine_evidence(groups))
    if isinstance(found, str):
        return found
    return chart_of(found, claim.threshold, title)


def chart_of(found: Forest, threshold: str, title: str) -> Chart | None:
    rows = found.rows
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
    return Chart(
        kind="forest",
        title=title,
        x_label=f"{found.what}: {marks}; dashed: the rule, {threshold}",
        y_label="",
        categories=tuple(row.label for row in rows),
        series=(series("one run", False, 0), series("a machine's runs pooled", True, 3)),
        thresholds=found.thresholds,
    )


class BenchForest(PublishedDirective):
    """A forest plot per claim of the page (or the claims named by :claims:)."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "claims": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        groups, published = self.machine_runs(), self.load_published()
        claims: dict[str, AnyClaim] = {claim.id: claim for claim in published.claims}
        wanted = selected(self.options.get("claims"), tuple(claims), "claims", published.path)
        output: list[nodes.Node] = []
        numbers = {claim.id: number for number, claim in enumerate(published.claims, start=1)}
        for claim_id in wanted:
            found = forest(claims[claim_id], groups, f"Conclusion {numbers[claim_id]}: {claims[claim_id].text}")
            if isinstance(found, str):
                output.append(nodes.paragraph(text=f"Conclusion {numbers[claim_id]}: {found}"))
            elif found is not None:
                output.append(chart_node(found, "×"))
        return output
