"""The way back to the sources: each page links its original, says how to set up before re-running, and links
every repetition's raw output (from the site built from the committed data)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from benchsite.results.machines import by_machine
from benchsite.results.published import load_published
from benchsite.results.store import recipe_views
from benchsite.sphinxext.setup_steps import setup_command
from committed import COMMITTED_DATA
from conftest import REPO

RECIPES = ("cherrypy-speed", "bottle-adapters", "wsgi-servers", "http-clients", "cherokee-vs-apache")
RAW_PAGES = {recipe: f"raw/{recipe}.html" for recipe in RECIPES if recipe != "cherrypy-speed"}
RAW_PAGES["cherrypy-speed"] = "recipes/cherrypy-speed.html"


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_page_links_its_original_page(committed_site: Path, recipe: str) -> None:
    published = load_published(COMMITTED_DATA / recipe / "published.toml")
    assert published.source_url, f"{recipe}: published.toml names no source_url"
    html = unescape((committed_site / "recipes" / f"{recipe}.html").read_text())
    assert f'href="{published.source_url}"' in html
    body = html[html.index("<h1") :]
    conclusions = re.search(r"Do(es)? the original conclusions? hold\?", body)
    assert conclusions is not None and body.index("Original page:") < conclusions.start()


@pytest.mark.parametrize("page", ["index.html", *(f"recipes/{recipe}.html" for recipe in RECIPES)])
def test_the_set_up_steps_come_before_every_re_run_block(committed_site: Path, page: str) -> None:
    text = re.sub(r"<[^>]+>", "", unescape((committed_site / page).read_text()))
    rerun = text.index("invoke recipe", text.index("Re-run"))
    for step in setup_command(REPO / "README.md").split(" && "):
        assert step in text[:rerun], step


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_repetitions_raw_output_is_a_link_to_the_stored_file(committed_site: Path, recipe: str) -> None:
    html = (committed_site / RAW_PAGES[recipe]).read_text()
    page_dir = (committed_site / RAW_PAGES[recipe]).parent
    linked = {(page_dir / href).resolve().read_text() for href in re.findall(r'href="(\.\./_downloads/[^"]+)"', html)}
    published = load_published(COMMITTED_DATA / recipe / "published.toml")
    shown = by_machine(recipe_views(COMMITTED_DATA / recipe, "full"), published.reference_machine)[0].main.run
    stored = {shown.raw_text(rep) for s in shown.subjects for c in s.cells for rep in c.repetitions}
    assert stored <= linked


TOOL_WORDS = {"ab": "ab", "ApacheBench": "ab", "wrk": "wrk", "h2load": "h2load"}


@pytest.mark.parametrize("recipe", RECIPES)
def test_no_page_names_a_load_tool_that_neither_its_runs_nor_its_original_used(
    committed_site: Path, recipe: str
) -> None:
    text = re.sub(r"<[^>]+>", " ", unescape((committed_site / "recipes" / f"{recipe}.html").read_text()))
    body = text[text.index("The question") :]
    named = {TOOL_WORDS[word] for word in re.findall(r"\b(ab|ApacheBench|wrk|h2load)\b", body)}
    ran = {
        cell.tool
        for view in recipe_views(COMMITTED_DATA / recipe, "full")
        for s in view.run.subjects
        for cell in s.cells
    }
    published = load_published(COMMITTED_DATA / recipe / "published.toml")
    original = {"ab"} if any(result.result is not None for result in published.results) else set()
    assert named <= ran | original, f"{recipe} names {sorted(named - ran - original)}"
