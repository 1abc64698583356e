"""The flag rule a page states is the rule its tables apply: every figure the stated rule flags is flagged,
and none it does not (wsgi-servers, every committed run and the built page)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from pages import one

from benchsite.results.figures import FLAG_RULE
from benchsite.results.machines import by_machine
from benchsite.results.metrics import METRICS
from benchsite.results.published import load_published
from benchsite.results.store import list_runs, load_view, recipe_views
from benchsite.results.view import RunView
from committed import COMMITTED_DATA

RECIPE = "wsgi-servers"


def stated(rule: str) -> tuple[float, float, float]:
    """The rule's three numbers as the page words them: the tool's CPU, the share of the ceiling, the server's CPU."""
    found = re.search(r"at least (\d+) % busy, or when the figure reached (\d+) % of .* under (\d+) % busy", rule)
    assert found is not None, rule
    tool, share, server = (float(n) for n in found.groups())
    return tool, share / 100, server


def flagged_by_the_words(view: RunView, subject: str, cell: str, rule: tuple[float, float, float]) -> bool:
    tool, share, server = rule
    summary = view.summaries[(subject, cell)]
    rps, ceiling = summary.median(), view.ceiling_rps(cell)
    load_busy, server_busy = summary.median(METRICS["load-share"]), summary.median(METRICS["server-share"])
    if load_busy is not None and load_busy >= tool:
        return True
    near = rps is not None and bool(ceiling) and rps >= share * ceiling
    return near and (server_busy is None or server_busy < server)


def ab_server_cells(view: RunView) -> list[tuple[str, str]]:
    return [
        (subject.name, cell.name)
        for subject in view.run.measured
        if subject.role == "server"
        for cell in subject.cells
        if cell.TOOL.tool_limited_at_ceiling
    ]


@pytest.mark.parametrize("path", list_runs(COMMITTED_DATA / RECIPE, "full"), ids=lambda p: p.name)
def test_every_committed_figure_is_flagged_exactly_where_the_stated_rule_says(path: Path) -> None:
    view, rule = load_view(path), stated(FLAG_RULE)
    checked = ab_server_cells(view)
    for subject, cell in checked:
        figure = view.figure(subject, cell)
        assert figure is not None
        assert figure.tool_limited == flagged_by_the_words(view, subject, cell, rule), (subject, cell, figure.flags)
    assert checked


@pytest.mark.integration
def test_the_page_states_the_rule_its_results_table_applies(committed_site: Path) -> None:
    html = unescape((committed_site / "recipes" / f"{RECIPE}.html").read_text())
    rule = stated(one(html, rule="flag").text)
    published = load_published(COMMITTED_DATA / RECIPE / "published.toml")
    view = by_machine(recipe_views(COMMITTED_DATA / RECIPE, "full"), published.reference_machine)[0].main
    for subject, cell in ab_server_cells(view):
        shown = one(html, recipe=RECIPE, subject=subject, cell=cell, status="figure").text
        assert ("limited by the load tool" in shown) == flagged_by_the_words(view, subject, cell, rule), shown
