"""Directives that look across every recipe: the front page's summary and the page of all verdicts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from docutils import nodes
from sphinx import addnodes

from benchsite.errors import BenchError
from benchsite.model.run import RUN_FILE, RunDocument
from benchsite.results.claims import State, Verdict
from benchsite.results.published import PUBLISHED_FILE, load_published
from benchsite.results.store import load_view, shown_run
from benchsite.sphinxext.base import ReportingDirective
from benchsite.sphinxext.comparison import VERDICT_NOTE, verdict_node
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


class AcrossRecipes(ReportingDirective):
    """Every recipe that has published figures and a run under bench_data_dir."""

    def recipes(self) -> list[tuple[str, RunDocument, list[Verdict]]]:
        data_dir = Path(self.config.bench_data_dir)
        note_listing(self.env, data_dir, f"*/{PUBLISHED_FILE}")
        found = []
        for published_path in sorted(data_dir.glob(f"*/{PUBLISHED_FILE}")):
            recipe_dir = published_path.parent
            note_listing(self.env, recipe_dir, f"*/{RUN_FILE}")
            run_path = shown_run(recipe_dir, self.config.bench_profile)
            if run_path is None:
                raise BenchError(
                    f"{recipe_dir}: published figures but no run: run `.venv/bin/invoke recipe {recipe_dir.name}`"
                )
            view, published = load_view(run_path), load_published(published_path)
            self.env.note_dependency(str(view.run.run_file))
            for file in published.files:
                self.env.note_dependency(str(file))
            found.append((recipe_dir.name, view.run, published.verdicts(view)))
        return found


class BenchSummary(AcrossRecipes):
    """One row per recipe: the page, the run shown, the machine, and how its original conclusions fared."""

    def render(self) -> list[nodes.Node]:
        rows = []
        for name, run, decided in self.recipes():
            counts = Counter(verdict.status for verdict in decided)
            ran = [verdict for verdict in decided if verdict.status != State.COULD_NOT_RUN]
            headline = next(iter(ran or decided), None)  # the first conclusion that could be tested here
            rows.append(
                [
                    link_to_page(f"recipes/{name}", run.title),
                    f"{run.run_id} ({run.profile.name}), {run.started_at[:10]}",
                    f"{run.environment.cpu_model}, {run.environment.cpu_count} CPUs",
                    "—"
                    if headline is None
                    else f"{headline.claim.text} Published {headline.published}, "
                    f"today {headline.today}: {headline.status}.",
                    data(
                        ", ".join(f"{counts[status]} {status}" for status in State if counts[status]) or "—",
                        recipe=name,
                        tally="verdicts",
                    ),
                ]
            )
        return [block(table(("Page", "Run shown", "Machine", "Headline claim", "Verdicts"), rows), table="summary")]


class BenchVerdicts(AcrossRecipes):
    """Every original conclusion of every page, with its rule and today's verdict."""

    def render(self) -> list[nodes.Node]:
        rows = []
        for name, run, decided in self.recipes():
            for verdict in decided:
                rows.append(
                    [
                        link_to_page(f"recipes/{name}", run.title),
                        verdict.claim.text,
                        nodes.literal(text=verdict.claim.rule),
                        verdict.published,
                        data(verdict.today, recipe=name, claim=verdict.claim.id, estimate="today"),
                        data(verdict_node(verdict.status), recipe=name, claim=verdict.claim.id, status=verdict.status),
                    ]
                )
        headers = ("Page", "Original conclusion", "Rule", "Published", "Today [95 % interval]", "Verdict")
        return [
            block(table(headers, rows, classes=["bench-claims", "bench-verdicts"]), table="verdicts"),
            nodes.paragraph(text=VERDICT_NOTE),
        ]
