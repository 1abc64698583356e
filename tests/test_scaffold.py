"""invoke new-page: straight after scaffolding, the quick profile runs and the docs build shows the page."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from benchsite.commands.scaffold import new_page
from benchsite.errors import BenchError
from benchsite.model.recipe import available_recipes, load_recipe
from benchsite.results.machines import MIN_EVIDENCE_ROUNDS
from benchsite.results.ranking import ranking_said
from benchsite.results.store import list_runs, load_view
from committed import COMMITTED_DATA
from conftest import REPO, cpu_hog


def invoke_in(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "invoke", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )


@pytest.mark.integration
def test_a_new_page_runs_and_builds_with_its_table_and_chart(tmp_path: Path) -> None:
    root = tmp_path / "site"
    # the checkout as it is (its set-up steps, tests and confs), without what git ignores or holds of its own
    left_out = (".git", ".venv*", "build", "_build", "__pycache__", ".*_cache", ".hypothesis", "*.egg-info", "data")
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(*left_out))
    shutil.copytree(COMMITTED_DATA, root / "data")  # the data as committed, never a user's own runs
    # the tests read the data git tracks, as in a checkout
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, capture_output=True)
    subprocess.run(["git", "add", "--", "data/"], cwd=root, check=True, capture_output=True)
    created = invoke_in(root, "new-page", "demo-servers", "--title", "Demo  HTTP servers")
    assert created.returncode == 0, created.stderr
    assert (root / "tests" / "test_recipe_demo_servers.py").is_file()
    unit_tier = invoke_in(root, "test", "--fast")  # green from the first minute: the new page states every rule
    assert unit_tier.returncode == 0, unit_tier.stdout[-3000:]
    before_any_run = invoke_in(root, "docs")  # builds, saying how to make the first run
    assert before_any_run.returncode == 0, before_any_run.stdout[-2000:] + before_any_run.stderr
    placeholder = (root / "docs" / "_build" / "html" / "recipes" / "demo-servers.html").read_text()
    assert placeholder.count("No run yet: <code") == 1
    assert "No run yet: .venv/bin/invoke recipe demo-servers --profile quick" in re.sub(r"<[^>]+>", "", placeholder)
    run = invoke_in(root, "recipe", "demo-servers", "--profile", "quick")
    assert run.returncode == 0, run.stderr
    docs = invoke_in(root, "docs")
    assert docs.returncode == 0, docs.stdout[-2000:] + docs.stderr
    page = (root / "docs" / "_build" / "html" / "recipes" / "demo-servers.html").read_text()
    assert "Hello app on cheroot" in page and '<img src="../_images/bench-' in page
    assert 'class="bench-answer' in page and "No run yet" not in page  # the answer card, from the quick run
    assert "<h1>Demo HTTP servers" in page  # the title as written, spaces tidied
    scaffolded = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_recipe_demo_servers.py"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert scaffolded.returncode == 0, scaffolded.stdout[-2000:]  # its own test passes on its own recipe
    # its own claim, decided, labelled as the page's own, with no empty comparison with an original
    assert "This page&#8217;s claim" in page or "This page's claim" in page
    assert "Ten concurrent clients get at least as many requests per second as one." in page
    verdict = re.search(r'class="bench-verdict-([a-z-]+)"', page)
    assert verdict is not None
    if verdict[1] == "could-not-run":  # on a busy machine: the quick run's one repetition of a cell disturbed
        disturbed, _ = load_view(list_runs(root / "data" / "demo-servers")[-1]).disturbed
        assert disturbed > 0, "could not run, though nothing disturbed the run"
    elif verdict[1] == "not-enough-evidence":  # a quick run of fewer than three rounds decides nothing
        run = load_view(list_runs(root / "data" / "demo-servers")[-1]).run
        rounds = min(len(cell.repetitions) for subject in run.measured for cell in subject.cells)
        assert rounds < MIN_EVIDENCE_ROUNDS, f"not enough evidence from {rounds} rounds"
    else:
        assert verdict[1] in ("holds", "does-not-hold", "inconclusive")
    assert "Original conclusion" not in page and "no earlier publication." not in page
    sections = re.findall(r'<section id="([^"]+)">(.*?)(?=<section id=|</section>)', page, re.S)
    assert len(sections) >= 5
    for name, body in sections:
        content = re.sub(r"<h[1-6].*?</h[1-6]>", "", body, flags=re.S)
        assert re.search(r"<(table|img|pre|p)\b", content), f"section {name} is empty"
    _a_busy_machine_still_shows_every_server(root)
    again = invoke_in(root, "new-page", "demo-servers")
    assert again.returncode == 1 and again.stderr.strip().startswith("error: recipes/demo-servers/recipe.toml")
    assert invoke_in(root, "new-page", "Bad_Name").stderr.strip() == (
        "error: 'Bad_Name' is not a recipe name: use lowercase letters, digits and hyphens, at most 40 characters "
        "(like my-servers)"
    )


@pytest.mark.parametrize("taken", ["all", "method", "experiments", "harness-overhead"])  # and data/'s own folders
def test_a_name_taken_by_recipe_all_or_a_data_folder_is_refused(tmp_path: Path, taken: str) -> None:
    (tmp_path / "data").symlink_to(COMMITTED_DATA)
    with pytest.raises(BenchError, match=f"^'{taken}' is taken"):
        new_page(taken, tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["data"]  # nothing written


def test_a_name_too_long_is_refused_shortened() -> None:
    with pytest.raises(BenchError, match="at most 40 characters") as refused:
        new_page("a" * 300, REPO)
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 200


def pinned_distributions() -> set[str]:
    """Every distribution the README's first command installs at a pinned version."""
    files = [REPO / "requirements.txt", *sorted((REPO / "conf").glob("requirements-*.txt"))]
    pins = (
        re.match(r"^([A-Za-z0-9_.-]+)(\[[^]]*\])?==", line.strip())
        for f in files
        for line in f.read_text().splitlines()
    )
    return {canonicalize_name(pin.group(1)) for pin in pins if pin}


def test_every_package_a_recipe_or_a_scaffolded_page_names_is_pinned_where_set_up_installs_it(tmp_path: Path) -> None:
    """The contributing guide's rule: a package a page runs is pinned in conf/requirements-host.txt, so that the
    README's first command installs it (a subject's `requires` only leaves it out where it is missing)."""
    shutil.copytree(REPO / "recipes", tmp_path / "recipes")
    shutil.copytree(REPO / "conf", tmp_path / "conf", ignore=shutil.ignore_patterns("machine.toml"))
    (tmp_path / "data").mkdir()
    new_page(next(f"pins-{n}" for n in range(100) if not (tmp_path / "recipes" / f"pins-{n}").exists()), tmp_path)
    pinned = pinned_distributions()
    for name in available_recipes(tmp_path / "recipes"):
        recipe = load_recipe(name, tmp_path / "recipes", tmp_path / "conf")
        named = {*recipe.packages, *(package for subject in recipe.subjects for package in subject.packages)}
        assert named and {canonicalize_name(p) for p in named} <= pinned, (name, named - pinned)


def _a_busy_machine_still_shows_every_server(root: Path) -> None:
    """The new page's quick run again, a busy loop on the servers' CPU throughout: whatever share of it was
    disturbed, every cell shows a figure (a lower bound where every repetition was disturbed, labelled), the
    ranking never says "no server answered", and a one-round profile never promises to measure again."""
    with cpu_hog(cpu=0, seconds=120):
        run = invoke_in(root, "recipe", "demo-servers", "--profile", "quick", "--no-wait")
    assert run.returncode == 0, run.stderr
    assert "measured again later" not in run.stderr
    view = load_view(list_runs(root / "data" / "demo-servers")[-1])
    for subject in view.run.measured:
        for cell in subject.cells:
            figure = view.figure(subject.name, cell.name)
            assert figure is not None
            at_least = figure.summary.at_least_rps()
            assert figure.summary.median() is not None or at_least is not None, (subject.name, cell.name)
            if at_least is not None:  # every repetition disturbed: the bound, flagged as a busy machine's
                assert any("a busy machine" in flag for flag in figure.flags)
            assert ranking_said(view, cell.name) != "no server answered"
    if any(rep.disturbed for s in view.run.subjects for c in s.cells for rep in c.repetitions):
        assert "repetitions quiet; the" in run.stderr and "the quick profile makes no further rounds" in run.stderr
