"""The committed recipes: subjects, cells and what each profile runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsite.errors import BenchError
from benchsite.model.recipe import Recipe, available_recipes, load_recipe
from conftest import REPO


def load(name: str) -> Recipe:
    return load_recipe(name, REPO / "recipes", REPO / "conf")


def test_every_recipe_has_a_quick_and_a_full_profile() -> None:
    names = available_recipes(REPO / "recipes")
    assert {"cherrypy-speed", "bottle-adapters", "wsgi-servers"} <= set(names)
    for name in names:
        recipe = load(name)
        assert recipe.profile("quick").rounds >= 1 and recipe.profile("full").rounds >= 2


def test_bottle_runs_raised_queues_only_where_the_queue_matters() -> None:
    recipe = load("bottle-adapters")
    plan = {subject.name: [cell.name for cell in cells] for subject, cells in recipe.plan(recipe.profile("full"))}
    assert plan["wsgiref"] == ["c1", "c10", "c100", "c1000"]
    assert plan["wsgiref-q1024"] == plan["paste-q1024"] == plan["cheroot-q1024"] == ["c100", "c1000"]
    assert {"fapws3", "cherrypy", "tornado", "bjoern", "meinheld", "gevent", "eventlet"} <= set(plan)
    quick = recipe.plan(recipe.profile("quick"))
    assert all(cell.name in ("c1", "c10") for _, cells in quick for cell in cells)
    assert "wsgiref-q1024" not in {subject.name for subject, _ in quick}


def test_wsgi_servers_measure_a_ceiling_and_cross_check_with_wrk() -> None:
    recipe = load("wsgi-servers")
    assert [s.name for s in recipe.subjects if s.role == "ceiling"] == ["nginx"]
    assert [c.name for c in recipe.cells] == ["c10", "c10-k", "wrk-c10", "h2load-c10"]
    quick_wrk = [c for _, cells in recipe.plan(recipe.profile("quick")) for c in cells if c.tool == "wrk"]
    assert quick_wrk and {c.duration_s for c in quick_wrk} == {1}


def test_a_profile_naming_an_unknown_cell_is_an_error(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "cherrypy-speed.toml").write_text("[profiles.quick]\nrequests = 10\nrounds = 1\ncells = ['c5']\n")
    with pytest.raises(
        BenchError,
        match=r"cherrypy-speed\.toml: profiles\.quick\.cells: c5 unknown: "
        "I know about c1, c1-k, c10, c10-k: fix the file",
    ):
        load_recipe("cherrypy-speed", REPO / "recipes", conf)
