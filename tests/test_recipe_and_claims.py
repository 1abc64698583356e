"""Recipe loading, statistics and claim verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsite.errors import BenchError
from benchsite.model.published import load_published, parse_claim
from benchsite.model.recipe import fill_placeholders, load_recipe
from benchsite.model.run import Repetition, WrkCell
from benchsite.results.claims import (
    COULD_NOT_RUN,
    NOT_REPRODUCED,
    REPRODUCED,
    PublishedFigures,
    evaluate,
)
from benchsite.results.stats import coefficient_of_variation_percent, summarize
from benchsite.tools.wrk import parse_wrk_output
from conftest import FIXTURES, REPO

PUBLISHED = REPO / "data" / "cherrypy-speed" / "published.toml"


def test_the_cherrypy_recipe_has_two_subjects_and_the_same_four_cells() -> None:
    recipe = load_recipe("cherrypy-speed", REPO / "recipes", REPO / "conf")
    assert [s.name for s in recipe.subjects] == ["framework", "raw-wsgi"]
    assert [c.name for c in recipe.loads] == ["c1", "c1-k", "c10", "c10-k"]
    assert recipe.profile("full").repetitions == 5 and recipe.profile("full").requests == 1000


def test_an_unknown_recipe_lists_the_known_ones() -> None:
    known = "bottle-adapters, cherokee-vs-apache, cherrypy-speed, http-clients, wsgi-servers"
    with pytest.raises(BenchError, match=f"unknown recipe 'nope': I know about {known}"):
        load_recipe("nope", REPO / "recipes", REPO / "conf")


def test_an_unknown_profile_lists_the_known_ones() -> None:
    recipe = load_recipe("cherrypy-speed", REPO / "recipes", REPO / "conf")
    with pytest.raises(BenchError, match="no profile 'fast': I know about full, quick"):
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


def test_every_original_claim_holds_on_the_published_figures() -> None:
    published = load_published(PUBLISHED)
    figures = PublishedFigures(published)
    verdicts = [evaluate(claim, figures, figures) for claim in published.claims]
    assert {v.status for v in verdicts} == {REPRODUCED}
    assert [v.published for v in verdicts] == ["2.319", "2.148", "3.858", "0.910", "0.843", "not honoured"]


class Table:
    """Figures from a {(subject, cell): rps} table."""

    def __init__(self, rps: dict[tuple[str, str], float]) -> None:
        self.values = rps

    def rps(self, subject: str, cell: str) -> float | None:
        return self.values.get((subject, cell))

    def keepalive_honoured(self, subject: str, cell: str) -> bool | None:
        return None

    def cpu_us(self, subject: str, cell: str) -> float | None:
        return None

    def subjects(self) -> list[str]:
        return list(dict.fromkeys(subject for subject, _ in self.values))

    def why_not(self, subject: str, cell: str) -> str | None:
        return None


def test_a_ratio_claim_is_decided_by_its_bounds_or_cannot_run() -> None:
    claim = parse_claim(
        {
            "id": "x",
            "text": "t",
            "kind": "ratio",
            "numerator": ["a", "c1"],
            "denominator": ["b", "c1"],
            "at_least": 1.5,
        },
        "p",
    )
    published = Table({("a", "c1"): 200.0, ("b", "c1"): 100.0})
    assert evaluate(claim, Table({("a", "c1"): 140.0, ("b", "c1"): 100.0}), published).status == NOT_REPRODUCED
    assert evaluate(claim, Table({("a", "c1"): 150.0, ("b", "c1"): 100.0}), published).status == REPRODUCED
    assert evaluate(claim, Table({("b", "c1"): 100.0}), published).status == COULD_NOT_RUN


def test_a_claim_without_bounds_is_rejected() -> None:
    with pytest.raises(BenchError, match="needs at_least or at_most"):
        parse_claim({"id": "x", "text": "t", "kind": "ratio", "numerator": ["a", "c"], "denominator": ["b", "c"]}, "p")


def test_a_fastest_claim_needs_the_subject_ahead_in_every_cell() -> None:
    claim = parse_claim({"id": "x", "text": "t", "kind": "fastest", "subject": "a", "cells": ["c1", "c10"]}, "p")
    ahead = Table({("a", "c1"): 9.0, ("b", "c1"): 5.0, ("a", "c10"): 9.0, ("b", "c10"): 5.0})
    behind = Table({("a", "c1"): 9.0, ("b", "c1"): 5.0, ("a", "c10"): 4.0, ("b", "c10"): 5.0})
    absent = Table({("b", "c1"): 5.0, ("b", "c10"): 5.0})
    assert evaluate(claim, ahead, ahead).status == REPRODUCED
    verdict = evaluate(claim, behind, ahead)
    assert (verdict.status, verdict.today) == (NOT_REPRODUCED, "fastest at 1 of 2 (beaten c10: b)")
    assert evaluate(claim, absent, ahead).status == COULD_NOT_RUN


def test_a_fastest_claim_can_limit_its_competitors() -> None:
    claim = parse_claim(
        {"id": "x", "text": "t", "kind": "fastest", "subject": "a", "cells": ["c1"], "among": ["a", "b"]}, "p"
    )
    figures = Table({("a", "c1"): 9.0, ("b", "c1"): 5.0, ("native", "c1"): 50.0})
    assert evaluate(claim, figures, figures).status == REPRODUCED


def test_a_wrk_cell_says_nothing_about_keepalive() -> None:
    result = parse_wrk_output((FIXTURES / "wrk" / "wrk-4.1.0-cheroot-c10.txt").read_text())
    rep = Repetition(
        index=1,
        argv=("wrk",),
        exit_code=0,
        timed_out=False,
        raw_output="raw.txt",
        wall_s=2.0,
        tool_cpu_s=0.1,
        server_cpu_s=0.5,
        backend_cpu_s={},
        result=result,
        error=None,
    )
    cell = WrkCell(name="wrk-c10", label="wrk -c 10", connections=10, duration_s=2, repetitions=(rep,))
    summary = summarize(cell)
    assert summary.keepalive_honoured is None
    assert summary.rps_median == 1770.08
    assert summary.server_cpu_us_per_request_median == 0.5 * 1e6 / 3561
