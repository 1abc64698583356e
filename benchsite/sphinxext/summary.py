"""Directives that look across every recipe: the front page's summary and the page of all verdicts."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes
from sphinx import addnodes

from benchsite.model.run import RUN_FILE, RunDocument
from benchsite.results.claims import State
from benchsite.results.claims.base import Badge
from benchsite.results.machines import ClaimAcross, MachineRuns, by_machine
from benchsite.results.published import PUBLISHED_FILE, load_published
from benchsite.results.store import recipe_views
from benchsite.sphinxext.base import ReportingDirective
from benchsite.sphinxext.claims import badge_node, counted, on_each_machine, overall_node, verdict_reading
from benchsite.sphinxext.listings import note_listing
from benchsite.sphinxext.nodes import block, data
from benchsite.sphinxext.tables import table


def link_to_page(docname: str, text: str) -> nodes.paragraph:
    """A link to another page of the site (a missing page is a warning under -n)."""
    reference = addnodes.pending_xref(
        "",
        nodes.inline(text=text),
        refdomain="std",
        reftype="doc",
        reftarget=f"/{docname}",
        refexplicit=True,
        refwarn=True,
    )
    paragraph = nodes.paragraph()
    paragraph += reference
    return paragraph


@dataclass(frozen=True)
class RecipeVerdicts:
    """One recipe's run shown (its reference machine's best-evidenced) and its claims over every machine."""

    name: str
    shown: RunDocument
    machines: list[MachineRuns]
    claims: list[ClaimAcross]


class AcrossRecipes(ReportingDirective):
    """Every recipe that has published figures and a run under bench_data_dir."""

    def recipes(self) -> list[RecipeVerdicts]:
        data_dir = Path(self.config.bench_data_dir)
        note_listing(self.env, data_dir, f"*/{PUBLISHED_FILE}")
        found = []
        for published_path in sorted(data_dir.glob(f"*/{PUBLISHED_FILE}")):
            recipe_dir = published_path.parent
            note_listing(self.env, recipe_dir, f"*/{RUN_FILE}")
            views = recipe_views(recipe_dir, self.config.bench_profile)
            if not views:
                continue  # a page with no run yet: its own page says how to make one
            published = load_published(published_path)
            for path in [*(view.run.run_file for view in views), *published.files]:
                self.env.note_dependency(str(path))
            groups = by_machine(views, published.reference_machine)
            found.append(RecipeVerdicts(recipe_dir.name, groups[0].main.run, groups, published.across(groups)))
        return found


# How a page's count of conclusions is coloured on the front page (said once, above the summary).
COUNT_COLOUR_RULE = (
    "Each page's conclusions are counted by what happened against each claim over every machine (its badge); the "
    "count takes the colour of the badge most of them share (on a tie, the one that says less: not settled before "
    "weaker than claimed before not as claimed before as claimed)."
)
_TIE_ORDER = ("open", "short", "machine", "missed", "met")  # by a badge's tone: the one that says less first


def majority(counts: Counter[Badge]) -> Badge | None:
    """The badge most conclusions share; on a tie, the one whose tone is earliest in _TIE_ORDER (None: none)."""
    if not counts:
        return None
    return max(counts, key=lambda badge: (counts[badge], -_TIE_ORDER.index(badge.tone)))


def count_node(counts: Counter[Badge], recipe: str) -> nodes.Node:
    """ "2 of 6 as claimed, 1 weaker than claimed, 3 not as claimed", coloured by the badge most share."""
    total = sum(counts.values())
    parts = [f"{counts[badge]} {badge.value}" for badge in Badge if counts[badge]]
    if not parts:
        return nodes.Text("—")
    text = f"{parts[0].replace(' ', f' of {total} ', 1)}" + "".join(f", {part}" for part in parts[1:])
    colour = majority(counts)
    assert colour is not None
    return data(
        nodes.strong(text=text, classes=[colour.css_class]),
        recipe=recipe,
        tally="verdicts",
        badge=colour,
    )


class BenchSummary(AcrossRecipes):
    """One row per recipe: the page, how its conclusions fared over every machine, its headline claim, the run
    shown and the machines."""

    @staticmethod
    def _verdict(headline: ClaimAcross, recipe: str) -> nodes.Node:
        """The headline claim's state, and where it alone could mislead (not HOLDS), the state in words."""
        cell = nodes.container()
        tag = {"recipe": recipe, "claim": headline.claim.id}
        cell += nodes.paragraph(
            "", "", data(badge_node(headline.badge), badge=headline.badge, state=headline.state, **tag)
        )
        if headline.state != State.HOLDS:
            cell += verdict_reading(headline, {"recipe": recipe, "claim": headline.claim.id, "scope": "summary"})
        return cell

    def render(self) -> list[nodes.Node]:
        rows = []
        for recipe in self.recipes():
            counts = Counter(claim.badge for claim in recipe.claims)
            ran = [claim for claim in recipe.claims if not claim.state.decided_nothing]
            headline = next(iter(ran or recipe.claims), None)  # the first conclusion that could be tested here
            run = recipe.shown
            rows.append(
                [
                    link_to_page(f"recipes/{recipe.name}", run.title),
                    count_node(counts, recipe.name),
                    "—" if headline is None else headline.claim.text,
                    "—" if headline is None or headline.published in ("", "—") else headline.published,
                    "—" if headline is None else self._verdict(headline, recipe.name),
                    f"{run.started_at[:16].replace('T', ' ')} UTC on {run.machine.name}"
                    + ("" if run.profile.name == "full" else f" ({run.profile.name} run)"),
                    f"{', '.join(group.label for group in recipe.machines)} ({counted(recipe.machines)})",
                ]
            )
        headers = (
            "Page",
            "Its conclusions",
            "Headline claim",
            "Original figure",
            "Its verdict",
            "Run shown",
            "Machines (runs)",
        )
        return [
            block(table(headers, rows, classes=["bench-summary"]), table="summary"),
            nodes.paragraph(text=COUNT_COLOUR_RULE),
        ]


class BenchVerdicts(AcrossRecipes):
    """Every conclusion of every page, with its rule, its verdict on each machine and over all of them."""

    def render(self) -> list[nodes.Node]:
        rows = []
        counts: Counter[State] = Counter()
        for recipe in self.recipes():
            counts.update(claim.state for claim in recipe.claims)
            for claim in recipe.claims:
                rows.append(
                    [
                        link_to_page(f"recipes/{recipe.name}", recipe.shown.title),
                        claim.claim.text,
                        nodes.literal(text=claim.claim.rule),
                        claim.published,
                        on_each_machine(claim, recipe.name),
                        overall_node(claim, recipe.name),
                    ]
                )
        headers = ("Page", "Conclusion", "Rule", "Published", "On each machine [95 % interval]", "Verdict")
        tally = ", ".join(state.counted(counts[state]) for state in State if counts[state])
        totals = nodes.paragraph()
        totals += nodes.strong(text="In all: ")
        totals += data(f"{sum(counts.values())} conclusions: {tally}.", tally="all-verdicts")
        return [
            totals,
            block(table(headers, rows, classes=["bench-claims", "bench-verdicts"]), table="verdicts"),
        ]
