"""The A/A calibration: coverage by rounds, width, compare's false positives (committed runs)."""

from __future__ import annotations

from html import unescape
from pathlib import Path

import pytest
from pages import one

from benchsite.model.method import METHOD_DIR
from benchsite.model.upgrade import read_method
from benchsite.results.calibration import AtRounds, aa_intervals, calibrate, slicing
from benchsite.results.compare import compare_runs, run_drift
from benchsite.results.interference import hog_experiment
from benchsite.results.intervals import Interval, half_width
from benchsite.results.published import PUBLISHED_FILE, load_published
from benchsite.results.store import list_runs, load_run, load_view
from benchsite.results.view import RunView
from committed import COMMITTED_DATA

DATA = COMMITTED_DATA / "calibration"


def test_coverage_counts_the_intervals_that_hold_the_true_ratio_of_one() -> None:
    at = AtRounds(5, (Interval(1.0, 0.9, 1.1, 0.95, 5), Interval(1.2, 1.1, 1.3, 0.95, 5)))
    assert (at.covering, at.coverage) == (1, 0.5)
    assert at.median_half_width == pytest.approx((half_width(at.intervals[0]) + half_width(at.intervals[1])) / 2)


def test_each_run_gives_three_pairs_in_each_cell_and_fewer_rounds_give_wider_intervals() -> None:
    view = load_view(list_runs(DATA, "full")[0])
    assert view.measured_names() == ["a", "b", "c"]
    every = aa_intervals(view, 10)
    assert len(every) == 3 * len(view.run.cell_names)
    disturbed = {  # the rounds others' work disturbed, per subject and cell: left out of the intervals
        (s.name, c.name): {rep.index for rep in c.repetitions if rep.disturbed}
        for s in view.run.subjects
        for c in s.cells
    }
    expected = [
        10 - len(disturbed[(top, cell)] | disturbed[(bottom, cell)])
        for cell in view.run.cell_names
        for top, bottom in (("a", "b"), ("a", "c"), ("b", "c"))
    ]
    assert [i.count for i in every] == expected and sum(expected) < 10 * len(expected)  # this run had some
    first_two = aa_intervals(view, 2)
    assert all(i.count == 2 for i in first_two)
    widths = [half_width(i) for i in first_two], [half_width(i) for i in every]
    assert sorted(widths[0])[len(widths[0]) // 2] > sorted(widths[1])[len(widths[1]) // 2]


def test_the_committed_calibration_covers_at_about_its_level_with_over_a_hundred_intervals() -> None:
    views = [load_view(path) for path in list_runs(DATA, "full")]
    found = calibrate(views)
    assert len(found.full.intervals) >= 100 and 0.90 <= found.full.coverage <= 0.99
    assert [at.rounds for at in found.by_rounds] == list(range(2, 11))
    pairs = len(views) // 2
    drift = run_drift(views)
    flagged = sum(any(c.changed for c in compare_runs(views[2 * i], views[2 * i + 1], drift)) for i in range(pairs))
    assert (found.compare.pairs, found.compare.pairs_flagged) == (pairs, flagged)


def test_the_calibration_page_shows_the_committed_runs_figures(committed_site: Path) -> None:
    html = unescape((committed_site / "calibration.html").read_text())
    found = calibrate([load_view(path) for path in list_runs(DATA, "full")])
    coverage = one(html, recipe="calibration", calibration="coverage").text
    assert (
        coverage == f"{found.full.covering} of {len(found.full.intervals)} cover 1 ({100 * found.full.coverage:.1f} %)"
    )
    compared = one(html, recipe="calibration", calibration="compare").text
    assert compared == f"{found.compare.pairs_flagged} of {found.compare.pairs} pairs flagged a change"
    sliced = slicing("sliced", [load_view(path) for path in list_runs(DATA, "sliced")])
    assert f"±{100 * sliced.median_half_width:.1f} %" in html


def test_the_hog_experiment_on_the_calibration_page_is_recomputed_from_its_runs(committed_site: Path) -> None:
    record = read_method(COMMITTED_DATA / METHOD_DIR / "interference.toml")
    quiet, hogged = ([load_run(path) for path in run_set.run_dirs(COMMITTED_DATA)] for run_set in record.sets)
    found = hog_experiment(quiet, hogged, load_published(COMMITTED_DATA / "cherrypy-speed" / PUBLISHED_FILE))
    disturbed = [sum(RunView(r).disturbed[0] for r in runs) for runs in (quiet, hogged)]
    assert len(found.hogged) == 6 and disturbed[1] > 5 * disturbed[0]  # the hogs disturbed their runs, not the others
    assert found.opposite(found.hogged, with_rule=True) == 0  # the rule's promise: never the other way
    said = one(unescape((committed_site / "calibration.html").read_text()), method="hogged").text
    flagged = found.pairs_flagged(True)
    assert flagged[0] <= 1  # same code minutes apart: compare, counting the machine's drift, rarely calls a change
    assert said.startswith(f"Of {6 * len(found.reference)} verdicts of the hogged runs, 0 decided the other way")
    assert f"flagged a change in {flagged[0]} of {flagged[1]} quiet/hogged pairs with the rule" in said
