"""One page, one answer: every section of a recipe page reads the one run its card names, a pick quotes that run's
own figures, and each claim is said once on its page."""

from __future__ import annotations

import re
import shutil
from html import unescape
from pathlib import Path

import pytest
from pages import find, one
from tiny_site import build

from benchsite.results.latency import fmt_ms, latency_figures
from benchsite.results.machines import by_machine
from benchsite.results.memory import MIB, memory_figures
from benchsite.results.published import PUBLISHED_FILE, load_published
from benchsite.results.ranking import ranked
from benchsite.results.store import load_view, recipe_views
from committed import COMMITTED_DATA

RECIPES = ("cherrypy-speed", "bottle-adapters", "wsgi-servers", "http-clients", "cherokee-vs-apache")
PICKS = {"wsgi-servers": ("wrk-c10", "c10"), "bottle-adapters": ("c1", "c10", "c1000")}


def page_of(site: Path, recipe: str) -> str:
    return (site / "recipes" / f"{recipe}.html").read_text()


def shown_run(recipe: str):
    published = load_published(COMMITTED_DATA / recipe / PUBLISHED_FILE)
    return by_machine(recipe_views(COMMITTED_DATA / recipe, "full"), published.reference_machine)[0].main


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_section_reads_the_run_the_card_names(committed_site: Path, recipe: str) -> None:
    html = page_of(committed_site, recipe)
    named = one(html, page_run=shown_run(recipe).run.run_id, recipe=recipe)
    assert shown_run(recipe).run.run_id in named.text
    runs = {element.data["run"] for element in find(html) if "run" in element.data}
    assert runs <= {shown_run(recipe).run.run_id}, runs


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_claim_is_said_once_on_its_page(committed_site: Path, recipe: str) -> None:
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", page_of(committed_site, recipe))).split())
    for claim in load_published(COMMITTED_DATA / recipe / PUBLISHED_FILE).claims:
        assert text.count(" ".join(claim.text.split())) == 1, claim.id


@pytest.mark.parametrize("recipe", sorted(PICKS))
def test_a_pick_quotes_the_page_runs_own_figures(committed_site: Path, recipe: str) -> None:
    html = page_of(committed_site, recipe)
    view = shown_run(recipe)
    run = view.run
    halves = {f.subject: next(load for load in f.loads if load.fraction == 0.5) for f in latency_figures(run)}
    peaks = {figure.subject: figure.peak for figure in memory_figures(run)}
    for cell in PICKS[recipe]:
        sentence = one(html, pick=cell, recipe=recipe).text
        shown = find(html, figure="rps", cell=cell, recipe=recipe)
        assert 1 <= len(shown) <= 3
        medians = {place.subject: place.median for place in ranked(view, cell)}
        for element in shown:
            subject = element.data["subject"]
            assert element.data["run"] == run.run_id
            assert element.text.startswith(f"{medians[subject]:,.0f}")
            p99 = one(html, figure="p99-half", cell=cell, subject=subject, recipe=recipe).text
            half = halves[subject]
            witness = half.witness_ms.get(99.0)
            if cell != run.latency.plan.capacity_cell:  # the open-loop load measured another kind of client
                assert p99 == "not measured for this kind of client"
            elif not half.tool_limited:
                assert p99 == fmt_ms(half.p(99.0))
            elif witness is not None:  # the tool's figure is its own: its witness's stands, said as such
                assert p99 == f"{fmt_ms(witness.value)} (witness)"
            else:
                assert p99 == "out of the load tool's reach"
            memory = one(html, figure="peak-uss", cell=cell, subject=subject, recipe=recipe).text
            peak = peaks[subject]
            assert peak is not None and memory == f"{peak.uss_bytes / MIB:,.1f} MiB"
        first = shown[0]
        assert sentence.startswith("For ") and first.text.split(" ")[0] in sentence  # the pick names its figure


BUSY_RUN = "20261128T013758.977172Z-full"  # README command 1 beside two tests/random_hog.py: 257 of 320 disturbed
PAGE_BODY = """.. bench-recipe:: cherrypy-speed

.. bench-answer::
   :beside:

.. bench-claims::

.. bench-forest::

.. bench-chart::

.. bench-pivot::

.. bench-work::
   :more: framework
   :less: raw-wsgi
   :cell: c1

.. bench-latency::

.. bench-memory::

.. bench-environment::
"""


NEWEST_LINE = re.compile(r'<div class="bench-block" data-bench-newest="[^"]+">.*?</div>', re.S)


def test_a_busy_rerun_shows_first_labelled_and_changes_nothing_else_but_the_history(tmp_path: Path) -> None:
    """The committed busy run of cherrypy-speed (README command 1 beside two busy loops) is the recipe's newest:
    the page's first screen names it in one labelled line; every other section reads the same with it as without
    it, and the history lists it, labelled."""
    busy = shown_run("cherrypy-speed")
    assert busy.run.run_id != BUSY_RUN
    with_it = tmp_path / "with"
    without = tmp_path / "without"
    for folder in (with_it, without):
        shutil.copytree(COMMITTED_DATA / "cherrypy-speed", folder / "cherrypy-speed")
    shutil.rmtree(without / "cherrypy-speed" / BUSY_RUN)
    assert load_view(with_it / "cherrypy-speed" / BUSY_RUN).busy
    pages = {
        name: build(tmp_path / f"site-{name}", PAGE_BODY, data_dir=folder)
        for name, folder in (("with", with_it), ("without", without))
    }
    assert not pages["with"].warnings and not pages["without"].warnings
    newest = one(pages["with"].html, newest=BUSY_RUN).text
    assert newest.startswith(f"The newest run (run {BUSY_RUN}), 2026-11-28 on amd-epyc-2cpu")
    assert "busy: 257 of 320 repetitions disturbed" in newest
    assert "another machine than the page's run" in newest  # the page reads an intel run: no side-by-side
    squeezed = {name: re.sub(r">\s+<", "><", NEWEST_LINE.sub("", page.html)) for name, page in pages.items()}
    assert squeezed["with"] == squeezed["without"]
    history = build(tmp_path / "history", ".. bench-history:: cherrypy-speed\n", data_dir=with_it)
    assert BUSY_RUN in history.text and "measured on a busy machine: 257 of 320 repetitions disturbed" in history.text
