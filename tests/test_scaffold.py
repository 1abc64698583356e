"""invoke new-page: straight after scaffolding, the quick profile runs and the docs build shows the page."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from committed import COMMITTED_DATA
from conftest import REPO

pytestmark = pytest.mark.integration


def invoke_in(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "invoke", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )


def test_a_new_page_runs_and_builds_with_its_table_and_chart(tmp_path: Path) -> None:
    root = tmp_path / "site"
    for part in ("benchsite", "conf", "docs", "recipes", "tests"):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("_build", "__pycache__"))
    shutil.copytree(COMMITTED_DATA, root / "data")  # the data as committed, never a user's own runs
    for file in ("tasks.py", "README.md", "pyproject.toml"):  # the pages' set-up steps come from the README
        shutil.copy(REPO / file, root / file)
    created = invoke_in(root, "new-page", "demo-servers", "--title", "Demo  HTTP servers")
    assert created.returncode == 0, created.stderr
    assert (root / "tests" / "test_recipe_demo_servers.py").is_file()
    run = invoke_in(root, "recipe", "demo-servers", "--profile", "quick")
    assert run.returncode == 0, run.stderr
    docs = invoke_in(root, "docs")
    assert docs.returncode == 0, docs.stdout[-2000:] + docs.stderr
    page = (root / "docs" / "_build" / "html" / "recipes" / "demo-servers.html").read_text()
    assert "Hello app on cheroot" in page and '<img src="../_images/bench-' in page
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
    assert re.search(r'class="bench-verdict-(holds|does-not-hold|inconclusive)"', page)
    assert "Original conclusion" not in page and "no earlier publication." not in page
    sections = re.findall(r'<section id="([^"]+)">(.*?)(?=<section id=|</section>)', page, re.S)
    assert len(sections) >= 5
    for name, body in sections:
        content = re.sub(r"<h[1-6].*?</h[1-6]>", "", body, flags=re.S)
        assert re.search(r"<(table|img|pre|p)\b", content), f"section {name} is empty"
    again = invoke_in(root, "new-page", "demo-servers")
    assert again.returncode == 1 and again.stderr.strip().startswith("error: recipes/demo-servers/recipe.toml")
    assert invoke_in(root, "new-page", "Bad_Name").stderr.strip() == (
        "error: 'Bad_Name' is not a recipe name: use lowercase letters, digits and hyphens, at most 40 characters "
        "(like my-servers)"
    )
    for taken in ("all", "method", "experiments", "harness-overhead"):  # `recipe all`, and data/'s own folders
        refused = invoke_in(root, "new-page", taken)
        assert refused.returncode == 1 and f"'{taken}' is taken" in refused.stderr, refused.stderr
    too_long = invoke_in(root, "new-page", "a" * 300)
    assert (
        too_long.returncode == 1 and "at most 40 characters" in too_long.stderr and "Traceback" not in too_long.stderr
    )
