"""A release sweep for real: two CherryPy releases from PyPI, each in its own cached environment (one patched
to run on today's Python), measured interleaved in one quick run; bad sweep settings are one-line errors."""

from __future__ import annotations

import shutil
import subprocess
from html import unescape
from pathlib import Path

import pytest
from pages import find

from ahead import AHEAD, Job
from benchsite.harness.variants.envs import recorded_env
from benchsite.model.recipe import load_recipe
from benchsite.model.run import RunDocument
from benchsite.model.sweep import SWEEP_DIR
from benchsite.results.intervals import paired_rounds
from benchsite.results.published import load_published
from benchsite.results.releases import changes_against_newest, releases_of
from benchsite.results.store import list_runs, load_run
from benchsite.results.view import RunView
from committed import COMMITTED_DATA
from conftest import REPO, run_invoke

pytestmark = pytest.mark.sweep

RECIPE = "cherrypy-speed"
RELEASES = ("17.4.2", "18.10.0")


def make_release_envs() -> subprocess.CompletedProcess:
    """The releases' environments (made once per checkout, under build/sweep/), as a user makes them first."""
    return run_invoke("sweep-envs", RECIPE, "--profile", "sweep-quick", timeout=900)


AHEAD.add("release environments", Job("sweep_run", make_release_envs, seconds=23))  # 2 s once made


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory: pytest.TempPathFactory) -> RunDocument:
    envs = AHEAD.take("release environments")
    assert envs.returncode == 0, envs.stderr[-3000:]
    data = tmp_path_factory.mktemp("sweep")
    result = run_invoke("recipe", RECIPE, "--profile", "sweep-quick", "--data-dir", str(data), timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return load_run(list_runs(data / RECIPE)[-1])


def test_every_release_runs_both_subjects_in_every_cell(sweep_run: RunDocument) -> None:
    names = {subject.name for subject in sweep_run.subjects}
    assert names == {f"{s}-{r.replace('.', '_')}" for s in ("framework", "raw-wsgi") for r in RELEASES}
    for subject in sweep_run.subjects:
        assert [cell.name for cell in subject.cells] == ["c1", "c1-k", "c10", "c10-k"]
        assert all(rep.ok for cell in subject.cells for rep in cell.repetitions), subject.name
    framework = sweep_run.subject("framework-18_10_0")
    assert framework is not None and framework.server_software == "CherryPy/18.10.0"  # the release answered


def test_each_copy_records_its_release_file_patch_and_the_dependencies_of_its_time(sweep_run: RunDocument) -> None:
    sweep = load_recipe(RECIPE, REPO / "recipes", REPO / "conf").sweeps["CherryPy"]
    assert sweep_run.variants is not None and sweep_run.variants.sweep
    assert sweep_run.profile.sweep == sweep_run.variants.package == "CherryPy"
    folders = []
    for release, variant in zip(RELEASES, sweep_run.variants.variants, strict=True):
        subject = sweep_run.subject(variant.copies["framework"])
        assert subject is not None and variant.spec == f"release:CherryPy=={release}"
        (origin,) = [o for o in subject.origins if o.provides == "CherryPy"]
        assert origin.path.startswith(f"{{sweep}}/CherryPy-{release}-")
        record = recorded_env(str(SWEEP_DIR / origin.path.removeprefix("{sweep}/") / "bin" / "python"))
        assert record is not None and origin.sha256 == record.dist_sha256["CherryPy"]
        assert variant.installed == record.installed and f"CherryPy=={release}" in record.installed
        assert variant.resolved_as_of == record.wanted.resolved_as_of is not None  # of its time
        assert (origin.build is not None) == (release in sweep.patches)
        raw = sweep_run.subject(variant.copies["raw-wsgi"])
        assert raw is not None and variant.version_of("cheroot") is not None
        assert raw.server_software in (f"Cheroot/{variant.version_of('cheroot')}", "Cheroot/unknown")  # 6.5.5: unknown
        folders.append(origin.path)
    assert len(set(folders)) == 2  # resolved as of two dates: two environments
    old, new = sweep_run.variants.variants
    assert old.version_of("cheroot") != new.version_of("cheroot")  # each on the server of its time
    assert str(SWEEP_DIR) not in sweep_run.run_file.read_text()  # stored as {sweep}


def test_the_claims_are_decided_per_release_and_each_comparison_made_or_said_why_not(sweep_run: RunDocument) -> None:
    """Whatever the machine did meanwhile: every release has a verdict per claim, and every older release's
    subject and cell is compared with the newest's, or left out because too few of its rounds were counted on
    both sides (a busy machine's disturbed rounds are measured again, but a quick run may end short of them)."""
    published = load_published(COMMITTED_DATA / RECIPE / "published.toml")
    releases = releases_of(sweep_run, published)
    assert [r.release for r in releases] == list(RELEASES)
    for release in releases:
        assert [v.claim.id for v in release.verdicts] == [
            f"{c.id}-{release.release.replace('.', '_')}" for c in published.claims
        ]
    view = RunView(sweep_run)
    changes = changes_against_newest(view, releases, ["framework", "raw-wsgi"], ["c1", "c10"])
    compared = {(c.release, c.subject, c.cell) for c in changes}
    old, new = releases
    for subject in ("framework", "raw-wsgi"):
        for cell in ("c1", "c10"):
            if (old.release, subject, cell) in compared:
                continue
            top, bottom = (view.round_values(r.copy(subject) or "", cell) for r in (old, new))
            pairs = paired_rounds(top, bottom) if top is not None and bottom is not None else []
            assert len(pairs) < 2, (subject, cell, "left out with rounds to compare")
    assert compared <= {(old.release, s, c) for s in ("framework", "raw-wsgi") for c in ("c1", "c10")}


def test_every_older_releases_subject_and_cell_is_compared_with_the_newest_in_a_committed_sweep() -> None:
    """The analysis on frozen data: the committed quiet sweep compares every release with the newest."""
    run = load_run(COMMITTED_DATA / RECIPE / "20261126T192326.671441Z-sweep")  # pinned by its id
    published = load_published(COMMITTED_DATA / RECIPE / "published.toml")
    releases = releases_of(run, published)
    cells = ["c1", "c1-k", "c10", "c10-k"]
    changes = changes_against_newest(RunView(run), releases, ["framework", "raw-wsgi"], cells)
    older = [r.release for r in releases[:-1]]
    assert len(older) >= 5
    assert [(c.release, c.subject, c.cell) for c in changes] == [
        (r, s, c) for r in older for s in ("framework", "raw-wsgi") for c in cells
    ]
    assert all(c.ratio.low is not None and c.ratio.low <= c.ratio.value <= c.ratio.high for c in changes)


def test_a_broken_release_is_one_line_and_stores_nothing(tmp_path: Path) -> None:
    for part in ("recipes", "conf"):
        shutil.copytree(REPO / part, tmp_path / part)
    conf = tmp_path / "conf" / f"{RECIPE}.toml"
    env = {"INVOKE_BENCH_RECIPES_DIR": str(tmp_path / "recipes"), "INVOKE_BENCH_CONF_DIR": str(tmp_path / "conf")}
    for broken, said in (('"17.x"', "releases"), ('"0.0.1"', "the registry has no release 0.0.1 of CherryPy")):
        conf.write_text(
            (REPO / "conf" / f"{RECIPE}.toml")
            .read_text()
            .replace('releases = ["17.4.2", "18.10.0"]', f"releases = [{broken}]")
        )
        result = run_invoke("recipe", RECIPE, "--profile", "sweep-quick", "--data-dir", str(tmp_path / "data"), env=env)
        assert result.returncode == 1 and said in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 2, result.stderr
        assert not list_runs(tmp_path / "data" / RECIPE)
    assert not list(SWEEP_DIR.glob("CherryPy-0.0.1-*"))  # no half-made environment left


@pytest.mark.integration
def test_each_sweep_row_names_the_server_its_release_ran(committed_site: Path) -> None:
    """Both sweeps on the cherrypy-speed page: every release's row says which cheroot its environment held,
    as the run records it (none where the release bundled its own server)."""
    html = unescape((committed_site / "recipes" / "cherrypy-speed-releases.html").read_text())
    shown = 0
    for profile in ("sweep", "cheroot-sweep"):
        runs = list_runs(COMMITTED_DATA / RECIPE, profile)
        if not runs:
            continue
        run = load_run(runs[-1])
        assert run.variants is not None
        for release, variant in zip(run.profile.releases, run.variants.variants, strict=True):
            expected = variant.version_of("cheroot") or "none (no cheroot)"
            found = [t.text for t in find(html, release=release, server="cheroot")]
            assert expected in found, (profile, release, found)
            shown += 1
    assert shown >= 16
