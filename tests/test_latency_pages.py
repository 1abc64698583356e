"""The latency and memory sections of the built pages show the values of the run they name, and the card's line
beside speed is that run's too."""

from __future__ import annotations

from html import unescape
from pathlib import Path

import pytest
from pages import find

from benchsite.results.latency import fmt_ms, latency_figures
from benchsite.results.memory import memory_figures
from benchsite.results.store import load_run
from benchsite.results.view import RunView
from benchsite.sphinxext.measured import beside_speed
from committed import COMMITTED_DATA

pytestmark = pytest.mark.integration

RECIPES = ("cherrypy-speed", "bottle-adapters", "wsgi-servers", "cherokee-vs-apache")


def shown_run(html: str, table: str) -> Path:
    [cell, *_] = find(html, metric=table)
    return COMMITTED_DATA / cell.data["recipe"] / cell.data["run"]


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_page_shows_its_latency_and_memory_figures(committed_site: Path, recipe: str) -> None:
    html = unescape((committed_site / "recipes" / f"{recipe}.html").read_text())
    run = load_run(shown_run(html, "capacity"))
    figures = latency_figures(run)
    assert len(figures) >= 1 and all(len(figure.loads) >= 3 for figure in figures)
    for figure in figures:
        [capacity] = find(html, metric="capacity", subject=figure.subject)
        assert capacity.text == f"{figure.capacity_rps:,.0f} req/s"
        for percentile in ("p50", "p99"):
            every_load = [
                each.text.split(" [")[0].split(" (tool ")[0]  # a load the tool's, its witness said beside
                for each in find(html, metric=percentile, subject=figure.subject, run=run.run_id)
                if "share" not in each.data  # the table of every load, not the summary
            ]
            assert every_load == [fmt_ms(load.p(float(percentile[1:]))) for load in figure.loads]
    memory = load_run(shown_run(html, "idle-uss"))
    for held in memory_figures(memory):
        [idle] = find(html, metric="idle-uss", subject=held.subject)
        assert held.idle is not None and idle.text == f"{held.idle.uss_bytes / 2**20:,.1f}"
    picked = find(html, recipe=recipe)
    if any("pick" in each.data for each in picked):  # a pick quotes each server's figures: no range beside it
        assert not find(html, beside="latency", recipe=recipe)
    else:
        [card] = find(html, beside="latency", recipe=recipe)
        assert card.text == beside_speed(RunView(run))
