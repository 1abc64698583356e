"""Recipe loading, statistics and claim verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsite.errors import BenchError
from benchsite.model.recipe import available_recipes, fill_placeholders, load_recipe
from benchsite.results.metrics import METRICS
from benchsite.results.published import load_published, parse_claim
from benchsite.results.stats import coefficient_of_variation_percent, summarize
from benchsite.tools.base import Repetition
from benchsite.tools.wrk import WrkCell, parse_wrk_output
from committed import COMMITTED_DATA
from conftest import FIXTURES, REPO

PUBLISHED = COMMITTED_DATA / "cherrypy-speed" / "published.toml"


def test_the_cherrypy_recipe_has_two_subjects_and_the_same_four_cells() -> None:
    recipe = load_recipe("cherrypy-speed", REPO / "recipes", REPO / "conf")
    assert [s.name for s in recipe.subjects] == ["framework", "raw-wsgi"]
    assert [c.name for c in recipe.cells] == ["c1", "c1-k", "c10", "c10-k"]
    assert recipe.profile("full").rounds == 5 and recipe.profile("full").requests == 1000


def test_an_unknown_recipe_lists_the_known_ones() -> None:
    known = ", ".join(available_recipes(REPO / "recipes"))  # whatever this working tree holds (new pages too)
    with pytest.raises(BenchError, match=f"unknown recipe 'nope': I know about {known}"):
        load_recipe("nope", REPO / "recipes", REPO / "conf")


def test_an_unknown_profile_lists_the_known_ones() -> None:
    recipe = load_recipe("cherrypy-speed", REPO / "recipes", REPO / "conf")
    known = ", ".join(sorted(recipe.profiles))
    with pytest.raises(BenchError, match=f"no profile 'fast': I know about {known} "):
        recipe.profile("fast")


def test_an_unknown_placeholder_lists_the_known_ones() -> None:
    with pytest.raises(BenchError, match=r"unknown placeholder \{prot\}.*I know about \{port\}, \{python\}"):
        fill_placeholders("--port={prot}", {"port": "1", "python": "p"}, "s")
    assert fill_placeholders("--port={port}", {"port": "8080"}, "s") == "--port=8080"


def test_broken_toml_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "recipes" / "x").mkdir(parents=True)
    (tmp_path / "recipes" / "x" / "recipe.toml").write_text("title = ")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "x.toml").write_text("")
    with pytest.raises(BenchError, match=r"recipe\.toml: not valid TOML"):
        load_recipe("x", tmp_path / "recipes", tmp_path / "conf")


def test_coefficient_of_variation_is_sample_stdev_over_mean() -> None:
    assert coefficient_of_variation_percent([90.0, 100.0, 110.0]) == pytest.approx(10.0)
    assert coefficient_of_variation_percent([100.0]) is None


def test_the_published_figures_give_the_original_values_of_every_claim() -> None:
    published = load_published(PUBLISHED)
    shown = [claim.published_value(published) for claim in published.claims]
    assert shown == ["2.319", "2.148", "3.858", "0.910", "0.843", "not honoured"]


def test_a_claim_without_bounds_is_rejected() -> None:
    with pytest.raises(BenchError, match="needs at_least or at_most"):
        parse_claim({"id": "x", "text": "t", "kind": "ratio", "numerator": ["a", "c"], "denominator": ["b", "c"]}, "p")


def test_a_wrk_cell_says_nothing_about_keepalive() -> None:
    result = parse_wrk_output((FIXTURES / "wrk" / "wrk-4.1.0-cheroot-c10.txt").read_text())
    rep = Repetition(
        index=1,
        argv=("wrk",),
        exit_code=0,
        timed_out=False,
        raw_output="raw.txt",
        wall_s=2.0,
        load_cpu_s=0.1,
        server_cpu_s=0.5,
        server_cpu_clock="ticks",
        server_system_s=None,
        backend_cpu_s={},
        result=result,
        error=None,
        started_after_s=None,
        steal_s=None,
        other_busy_s=None,
        other_busy_clock=None,
        disturbed=False,
        server_memory=None,
        memory_output=None,
    )
    cell = WrkCell(name="wrk-c10", label="wrk -c 10", connections=10, duration_s=2).run_record(0, [rep])
    summary = summarize(cell)
    assert summary.keepalive_honoured is None
    assert summary.median() == 1770.08
    assert summary.median(METRICS["server-cpu"]) == 0.5 * 1e6 / 3561
