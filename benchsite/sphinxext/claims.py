"""The claims table: each conclusion, its rule, its verdict on every machine (all of its runs pooled)
and over all machines."""

from __future__ import annotations

from collections.abc import Sequence

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from benchsite.errors import BenchError
from benchsite.results.claims import State
from benchsite.results.claims.base import Badge
from benchsite.results.machines import (
    ACROSS_MACHINES_RULE,
    BADGE_ACROSS_RULE,
    ON_A_MACHINE_RULE,
    READING_RULE,
    ClaimAcross,
    MachineRuns,
)
from benchsite.sphinxext.base import PublishedDirective
from benchsite.sphinxext.nodes import bench_details, block, data
from benchsite.sphinxext.tables import table

VERDICT_RULE = (
    ON_A_MACHINE_RULE,
    READING_RULE,
    ACROSS_MACHINES_RULE + " Numbers from different machines are never pooled.",
    BADGE_ACROSS_RULE,
)


def claim_anchor(claim_id: str) -> str:
    """The id of a claim's row in the claims table, which the answer card links to."""
    return f"claim-{claim_id}"


def verdict_node(state: State, not_compared: str = "") -> nodes.Node:
    """The verdict in capitals, with a class per state for its colour; a state decided on part of its
    comparisons says so inside it ("HOLDS where compared: 7 of 31 comparisons not made")."""
    node = nodes.strong(text=state.upper(), classes=[state.css_class])
    if not_compared and not state.decided_nothing:
        node += nodes.inline(text=f" where compared ({not_compared})", classes=["bench-partial"])
    return node


def badge_node(badge: Badge, not_compared: str = "") -> nodes.Node:
    """What happened against the claim, in capitals, coloured by its tone; a badge decided on part of its
    comparisons says so inside it ("AS CLAIMED where compared (7 of 31 comparisons not made)")."""
    node = nodes.strong(text=badge.upper(), classes=[badge.css_class])
    if not_compared and badge.tone != "open":
        node += nodes.inline(text=f" where compared ({not_compared})", classes=["bench-partial"])
    return node


def reading_node(reading: str, **tag: str) -> nodes.paragraph:
    """A verdict in a plain sentence: direction and size against the claim's, with the interval as factors."""
    return data(nodes.paragraph(text=reading, classes=["bench-reading"]), reading="verdict", **tag)


def counted(groups: Sequence[MachineRuns]) -> str:
    """What a verdict rests on: "2 machines (3 set-ups), 6 runs"."""
    machines = len({group.machine.id for group in groups})
    runs = sum(len(group.views) for group in groups)
    setups = f" ({len(groups)} set-ups)" if len(groups) != machines else ""
    return f"{machines} machine{'s' * (machines != 1)}{setups}, {runs} run{'s' * (runs != 1)}"


def on_each_machine(across: ClaimAcross, recipe: str) -> nodes.container:
    """One line per machine: its name, its runs, the pooled estimate and its verdict there."""
    lines = nodes.container(classes=["bench-machines"])
    for found in across.machines:
        runs = len(found.runs.views)
        line = nodes.paragraph()
        line += nodes.strong(text=found.runs.label)
        line += nodes.Text(f" ({runs} run{'s' * (runs != 1)}): ")
        tag = {"recipe": recipe, "claim": across.claim.id, "scope": "machine", "machine": found.runs.label}
        line += data(found.verdict.today, estimate="pooled", **tag)
        line += nodes.Text(" ")
        line += data(verdict_node(found.verdict.state, found.verdict.not_compared), state=found.verdict.state, **tag)
        lines += line
        if found.verdict.details:
            lines += every_item(found.verdict.details)
    return lines


def every_item(items: tuple[str, ...]) -> bench_details:
    """The whole list a shortened verdict names only the first few of, opened on demand."""
    listing = nodes.bullet_list()
    for item in items:
        listing += nodes.list_item("", nodes.paragraph(text=item))
    details = bench_details(summary=f"the {len(items)} comparisons")
    details += listing
    return details


def overall_node(across: ClaimAcross, recipe: str, said: bool = True) -> nodes.container:
    """The verdict over all machines and what it rests on; `said`: and, where the state alone could mislead, the
    state in words (a recipe page's card says it, so its claims table does not again)."""
    cell = nodes.container()
    state = across.state
    verdict = nodes.paragraph()
    tag = {"recipe": recipe, "claim": across.claim.id, "scope": "all"}
    verdict += data(badge_node(across.badge, across.not_compared), badge=across.badge, **tag)
    verdict += nodes.Text(" (the rule: ")
    verdict += data(nodes.emphasis(text=state.value), state=state, **tag)
    verdict += nodes.Text(")")
    cell += verdict
    rests = counted([found.runs for found in across.machines])
    cell += nodes.paragraph(text=across.depends_on + f" ({rests})" if state == State.DEPENDS else rests)
    if said and state != State.HOLDS:  # "holds" says it; the words matter where the state alone misleads
        cell += verdict_reading(across, {"recipe": recipe, "claim": across.claim.id, "scope": "all"})
    return cell


def verdict_reading(across: ClaimAcross, tag: dict[str, str]) -> nodes.paragraph:
    """The state in a plain sentence, from the machine that made it (the first of `deciding`); where no
    machine measured it, why."""
    made = across.deciding
    if not made or made[0].verdict.state == State.COULD_NOT_RUN:
        why = made[0].verdict.today if made else "no machine measured it"
        return reading_node(f"Not measured: {why}.", **tag)
    first = made[0]  # the others that made the state are listed beside it, with their estimates
    return reading_node(f"On {first.runs.label}: {first.verdict.reading}", **tag)


class BenchClaims(PublishedDirective):
    """Each conclusion, the rule that tests it, its verdict on each machine and over all of them."""

    def render(self) -> list[nodes.Node]:
        groups, published = self.machine_runs(), self.load_published()
        shown = groups[0].main
        subjects, cells = self.declared_names(shown)
        published.check_names(subjects, cells)
        own = not published.results  # no earlier publication: the claims are this page's own
        recipe = shown.run.recipe
        rows = [
            [
                nodes.paragraph(text=f"Conclusion {number} of the card", ids=[claim_anchor(across.claim.id)]),
                nodes.literal(text=across.claim.rule),
                *([] if own else [across.published]),
                on_each_machine(across, recipe),
                overall_node(across, recipe, said=False),
            ]
            for number, across in enumerate(published.across(groups), start=1)
        ]
        if not rows:
            raise BenchError(f"{published.path}: no [[claims]]: record the conclusions to decide")
        machine_column = "On each machine: all its runs pooled [95 % interval]"
        if own:
            headers: tuple[str, ...] = ("This page's claim", "Rule", machine_column, "Verdict")
        else:
            headers = ("Original conclusion", "Rule", "Published", machine_column, "Verdict")
        claims = table(headers, rows, classes=["bench-claims", *(["bench-own-claims"] if own else [])])
        return [block(claims, table="claims", recipe=recipe)]


class BenchVerdictRule(SphinxDirective):
    """The whole verdict rule, once (the methodology page): on a machine, in words, and over all machines, from
    the constants the code applies."""

    def run(self) -> list[nodes.Node]:
        return [node for paragraph in VERDICT_RULE for node in self.parse_text_to_nodes(paragraph)]
