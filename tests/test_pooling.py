"""Verdicts from all the evidence: runs pooled per machine, machines kept apart (constructed runs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from test_statistics import FRAMEWORK, PUBLISHED, run_with

from benchsite.model.machine import machine_of
from benchsite.model.run import RunDocument
from benchsite.results.claims import State
from benchsite.results.claims.fastest import FastestClaim
from benchsite.results.claims.keepalive import KeepaliveClaim
from benchsite.results.evidence import Pooled, log_ratio_estimate
from benchsite.results.machines import (
    ACROSS_MACHINES_RULE,
    across_machines,
    by_machine,
    overall,
    picked_by,
    records_kept,
)
from benchsite.results.metrics import RPS
from benchsite.results.published import parse_claim
from benchsite.results.store import RUN_FILE, load_run, new_run_id, recipe_views
from benchsite.results.view import RunView
from benchsite.sphinxext.chartspec import Chart
from benchsite.sphinxext.claims import VERDICT_RULE
from benchsite.sphinxext.forest import forest
from committed import COMMITTED_DATA
from conftest import REPO

TOP, BOTTOM = ("raw-wsgi", "c1"), ("framework", "c1")
RATIO = parse_claim(
    {"id": "x", "text": "t", "kind": "ratio", "numerator": list(TOP), "denominator": list(BOTTOM), "at_least": 1.5},
    "test",
)


def run_at(ratio: float, jitter: tuple[float, ...] = (1.0, 1.05, 0.95, 1.02, 0.98), machine: str = "") -> RunDocument:
    """The committed run with raw-wsgi at `ratio` times the framework, round by round (fixed test inputs), on
    its own machine or on another one (a constructed fingerprint) named `machine`."""
    raw = [f * ratio * j for f, j in zip(FRAMEWORK, jitter, strict=True)]
    run = run_with({BOTTOM: FRAMEWORK, TOP: raw})
    if machine:
        fingerprint = run.machine.fingerprint.model_copy(update={"cpu_model": f"Test CPU {machine}"})
        run = run.model_copy(update={"machine": machine_of(fingerprint, machine)})
    return run


def test_one_run_pooled_is_that_runs_own_interval() -> None:
    view = RunView(run_at(2.0))
    assert Pooled([view]).ratio(TOP, BOTTOM) == view.ratio(TOP, BOTTOM)


def test_runs_that_agree_pool_to_a_narrower_interval_than_each() -> None:
    views = [RunView(run_at(2.0)), RunView(run_at(2.02)), RunView(run_at(1.98))]
    pooled = Pooled(views).ratio(TOP, BOTTOM)
    single = views[0].ratio(TOP, BOTTOM)
    assert pooled is not None and single is not None and pooled.runs == 3 and pooled.count == 15
    assert pooled.high - pooled.low < single.high - single.low
    estimates = [log_ratio_estimate(view, TOP, BOTTOM, RPS) for view in views]
    assert pooled.value == pytest.approx(np.exp(np.mean([e[0] for e in estimates])), rel=1e-3)


def test_spread_between_runs_widens_the_pooled_interval() -> None:
    steady = Pooled([RunView(run_at(r)) for r in (2.0, 2.02, 1.98)]).ratio(TOP, BOTTOM)
    spread = Pooled([RunView(run_at(r)) for r in (1.6, 2.0, 2.5)]).ratio(TOP, BOTTOM)
    assert steady is not None and spread is not None
    # tau² > 0 carries the runs' disagreement: the interval is many times wider on the log scale
    assert np.log(spread.high / spread.low) > 5 * np.log(steady.high / steady.low)


def test_two_machines_that_disagree_make_a_claim_depend_on_the_machine() -> None:
    views = [RunView(run_at(r, machine="fast")) for r in (2.0, 2.05)]
    views += [RunView(run_at(r, machine="slow")) for r in (1.2, 1.22)]
    groups = by_machine(views)
    assert [group.label for group in groups] == ["fast", "slow"]  # equal runs: the newest machine last
    [claim] = across_machines(groups, (RATIO,), PUBLISHED)
    assert [m.verdict.state for m in claim.machines] == [State.HOLDS, State.DOES_NOT_HOLD]
    assert claim.state == State.DEPENDS and claim.depends_on == "holds on fast; does not hold on slow"


def test_a_named_reference_machine_comes_first_whatever_its_runs() -> None:
    views = [RunView(run_at(2.0, machine="many")), RunView(run_at(2.0, machine="many"))]
    views.append(RunView(run_at(2.0, machine="mine")))
    assert [g.label for g in by_machine(views)] == ["many", "mine"]
    assert [g.label for g in by_machine(views, reference="mine")] == ["mine", "many"]


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        ([State.HOLDS, State.HOLDS], State.HOLDS),
        ([State.DOES_NOT_HOLD, State.COULD_NOT_RUN], State.DOES_NOT_HOLD),
        ([State.HOLDS, State.INCONCLUSIVE], State.INCONCLUSIVE),
        ([State.HOLDS, State.INCONCLUSIVE, State.DOES_NOT_HOLD], State.DEPENDS),
        ([State.COULD_NOT_RUN], State.COULD_NOT_RUN),
    ],
)
def test_over_machines_a_claim_holds_everywhere_nowhere_or_depends(states: list[State], expected: State) -> None:
    assert overall(states) == expected


def test_a_forest_shows_each_run_and_each_machines_pooled_estimate_against_the_rule() -> None:
    views = [RunView(run_at(r, machine="fast")) for r in (2.0, 2.05)] + [RunView(run_at(1.2, machine="slow"))]
    groups = by_machine(views)
    chart = forest(RATIO, groups, "title")
    assert isinstance(chart, Chart) and chart.thresholds == (1.5,)
    one_run, pooled = chart.series
    assert len(chart.categories) == 4 and chart.categories[2] == "fast, 2 runs pooled"  # 2 runs, pooled, 1 run
    assert one_run.medians[0] == views[0].ratio(TOP, BOTTOM).value and one_run.medians[2] is None
    assert pooled.medians[2] == Pooled(views[:2]).ratio(TOP, BOTTOM).value
    assert one_run.medians[3] == views[2].ratio(TOP, BOTTOM).value
    assert "95\u00a0% intervals" in chart.x_label


def test_a_fastest_claims_forest_shows_the_closest_competitor_per_machine_and_cell() -> None:
    claim = parse_claim(
        {"id": "f", "text": "t", "kind": "fastest", "subject": "raw-wsgi", "cells": ["c1"], "among": []}, "test"
    )
    assert isinstance(claim, FastestClaim)
    views = [RunView(run_at(r, machine="m")) for r in (2.0, 2.05)]
    chart = forest(claim, by_machine(views), "title")
    assert isinstance(chart, Chart) and chart.thresholds == (1.0,)
    [label] = chart.categories
    rivals = [n for n in views[0].measured_names() if n != "raw-wsgi" and Pooled(views).ran(n, "c1")]
    closest = min(Pooled(views).ratio(TOP, (r, "c1")).value for r in rivals)
    assert label.startswith("m · c1 ÷ ") and chart.series[1].medians == (closest,)


def test_a_keepalive_claim_is_explained_by_what_the_tool_saw_on_each_machine() -> None:
    claim = parse_claim(
        {
            "id": "k",
            "text": "Keeps alive.",
            "kind": "keepalive",
            "subject": "framework",
            "cell": "c1-k",
            "honoured": True,
        },
        "test",
    )
    assert isinstance(claim, KeepaliveClaim)
    views = [RunView(run_at(2.0, machine="m"))]
    seen, count = views[0].keepalive_seen("framework", "c1-k")
    said = forest(claim, by_machine(views), "title")  # the kind says it in words: it has no ratio to draw
    assert isinstance(said, str) and said.startswith("Decided on what the load tool reported")
    assert f"m: {'honoured' if True in seen else 'not honoured'} in all {count} repetitions" in said


H, N, U, L, X = (State.HOLDS, State.DOES_NOT_HOLD, State.INCONCLUSIVE, State.TOOL_LIMITED, State.COULD_NOT_RUN)


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        ((H,), H),
        ((H, H), H),
        ((H, X), H),  # could not run on one: does not count
        ((H, L), H),  # the load tool set the figure on one: does not count
        ((N, N), N),
        ((N, X), N),
        ((H, N), State.DEPENDS),
        ((H, N, U), State.DEPENDS),  # two disagree
        ((H, U), U),  # the case the pages once got wrong: holds on one, inconclusive on another
        ((N, U), U),
        ((U, U), U),
        ((U, X), U),
        ((X, X), X),
        ((L, X), L),
    ],
)
def test_over_all_machines_each_combination_gives_what_the_pages_rule_says(
    states: tuple[State, ...], expected: State
) -> None:
    assert overall(states) == expected
    counted = [s for s in states if s not in (L, X)]
    said = (  # the sentence every page states (ACROSS_MACHINES_RULE), applied word by word
        H
        if counted and all(s == H for s in counted)
        else N
        if counted and all(s == N for s in counted)
        else State.DEPENDS
        if H in counted and N in counted
        else U
        if U in counted
        else None
    )
    assert said in (expected, None) and (said is not None or not counted)


def test_the_rule_applied_is_the_one_the_methodology_page_renders() -> None:
    """The methodology page states the verdict rule from the constants `overall` applies; recipe pages link it."""
    assert ".. bench-verdict-rule::" in (REPO / "docs" / "methodology.rst").read_text()
    assert any(ACROSS_MACHINES_RULE in paragraph for paragraph in VERDICT_RULE)
    for page in [*(REPO / "docs" / "recipes").glob("*.rst"), REPO / "docs" / "verdicts.rst"]:
        assert "verdict-rule>`" in page.read_text() or ":ref:`verdict-rule`" in page.read_text(), page.name


def run_spread(spread: float) -> RunDocument:
    """The committed run with every cell's req/s spread ±spread around 1,000, round by round (fixed inputs)."""
    jitter = (1.0, 1 + spread, 1 - spread, 1 + spread / 2, 1 - spread / 2)
    run = run_with({})
    cells = {(s.name, c.name): [1000.0 * j for j in jitter] for s in run.subjects for c in s.cells}
    return run_with(cells)


def test_a_page_shows_the_steadiest_run_not_the_newest() -> None:
    steady, noisy = RunView(run_spread(0.02)), RunView(run_spread(0.30))
    assert noisy.noise_percent is not None and steady.noise_percent is not None
    assert noisy.noise_percent > 10 * steady.noise_percent
    [group] = by_machine([steady, noisy])  # the noisy run is the newer one
    assert group.main is steady and group.views == (steady, noisy)  # shown: the steady one; pooled: both
    [group] = by_machine([noisy, steady])
    assert group.main is steady
    assert picked_by(group.views) == "the least noise"
    again = RunView(run_spread(0.02))
    [group] = by_machine([steady, again])  # equal evidence: the newer
    assert group.main is again and picked_by(group.views) == "the latest"
    assert picked_by([steady]) == ""


def test_the_least_noise_outranks_more_kinds_of_record() -> None:
    """A run that kept more kinds of record (instruction counts, say) but is noisier does not become the page's."""
    counted = load_run(COMMITTED_DATA / "cherrypy-speed" / "20261123T234904.925606Z-full").counting  # pinned
    steady = RunView(run_spread(0.02))
    richer = RunView(run_spread(0.30).model_copy(update={"counting": counted}))
    assert records_kept(richer) > records_kept(steady)
    [group] = by_machine([steady, richer])
    assert group.main is steady and picked_by(group.views) == "the least noise"


def test_a_noisier_new_run_is_pooled_but_does_not_replace_the_pages_run(tmp_path: Path) -> None:
    recipe_dir = tmp_path / "cherrypy-speed"
    shutil.copytree(COMMITTED_DATA / "cherrypy-speed", recipe_dir, ignore=shutil.ignore_patterns("*-quick"))
    reference = "amd-epyc-2cpu"  # five alike runs (none measured latency or memory): one to copy as the newest
    before = by_machine(recipe_views(recipe_dir, "full"), reference)[0]
    # a real run of the same machine that kept as much as the shown one, but noisier, copied as the newest run
    alike = [view for view in before.views if records_kept(view) == records_kept(before.main)]
    noisiest = max(alike, key=lambda view: view.noise_percent or 0.0)
    assert (noisiest.noise_percent or 0.0) > (before.main.noise_percent or 0.0)
    run_id = new_run_id("full")
    shutil.copytree(noisiest.run.path, recipe_dir / run_id)
    document = json.loads((recipe_dir / run_id / RUN_FILE).read_text())
    (recipe_dir / run_id / RUN_FILE).write_text(json.dumps({**document, "run_id": run_id}))
    after = by_machine(recipe_views(recipe_dir, "full"), reference)[0]
    assert after.views[-1].run.run_id == run_id and len(after.views) == len(before.views) + 1
    assert after.main.run.run_id == before.main.run.run_id
    assert after.main.summaries == before.main.summaries  # the main table's figures, unchanged
