"""One comparison engine: a release of a sweep and a side of an A/B run, given the same rounds, are called
changed (or not) by the same rule, with the same interval; every "changed" in the code comes from it."""

from __future__ import annotations

import re

from benchsite.results.comparing import paired_cells
from benchsite.results.releases import releases_of, step_changes
from benchsite.results.store import list_runs, load_run
from benchsite.results.view import RunView
from committed import COMMITTED_DATA
from conftest import REPO


def test_a_release_and_an_ab_side_with_the_same_rounds_are_called_alike() -> None:
    path = COMMITTED_DATA / "cherrypy-speed" / "20261126T175644.478812Z-cheroot-sweep"
    assert path in list_runs(COMMITTED_DATA / "cherrypy-speed", "cheroot-sweep")
    run = load_run(path)
    assert run.variants is not None
    releases = {release.release: release for release in releases_of(run, None)}
    before, after = releases["8.0.0"], releases["8.1.0"]
    cells = [cell.name for cell in run.subjects[0].cells]
    steps = {s.cell: s for s in step_changes(RunView(run), [before, after], ["raw-wsgi"], cells)}
    # the same run read as an A/B run of those two releases: A = 8.0.0, B = 8.1.0
    sides = run.variants.model_copy(
        update={"reference": before.variant.name, "package": None, "variants": (before.variant, after.variant)}
    )
    ab = {cell.cell: cell for cell in paired_cells(RunView(run.model_copy(update={"variants": sides})))}
    assert set(steps) == set(ab) == set(cells)
    for cell in cells:
        side = ab[cell]
        assert side.time == steps[cell].ratio and side.time_changed == steps[cell].changed
    assert steps["c1-k"].changed and steps["c1-k"].ratio.value < 0.01  # the stall, called both ways


def test_only_the_comparison_engine_decides_what_changed() -> None:
    """The statistics of "changed" live in results/comparing.py; sweeps and A/B runs call compare_copies, and
    compare's two-run test calls its beyond_margin."""
    sources = {path.relative_to(REPO).as_posix(): path.read_text() for path in (REPO / "benchsite").rglob("*.py")}
    assert "def compare_copies(" in sources["benchsite/results/comparing.py"]
    assert "compare_copies(" in sources["benchsite/results/releases.py"]
    assert "beyond_margin(" in sources["benchsite/results/compare.py"]
    callers = {name for name, text in sources.items() if re.search(r"\bbeyond_margin\(|\bcompare_copies\(", text)}
    assert callers == {
        "benchsite/results/comparing.py",
        "benchsite/results/releases.py",
        "benchsite/results/compare.py",
        "benchsite/results/deciding.py",  # a sequential run's looks: the same engine, after every round
    }
    assert not (REPO / "benchsite" / "results" / "versus.py").exists()
