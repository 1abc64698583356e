"""A user's own runs change no test's outcome: tests read the committed data tree, never data/ itself."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchsite.results.store import list_runs
from committed import COMMITTED_DATA, copy_committed_data, tracked_data_files
from conftest import REPO

TESTS = Path(__file__).resolve().parent
# A test reading the repository's data/ directly: the path built from REPO, data/ among folders copied from it,
# or a task left to its default data dir.
READS_DATA = re.compile(r'REPO\s*/\s*"data"|for \w+ in \([^)]*"data"|run_invoke\(\s*"docs"(?!.*--data-dir)')


def test_no_test_reads_the_repositorys_data_folder_directly() -> None:
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(TESTS.glob("*.py"))
        if path.name != "committed.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if READS_DATA.search(line)
    ]
    assert offenders == []


def test_the_committed_copy_holds_exactly_the_tracked_files() -> None:
    copied = sorted(str(p.relative_to(COMMITTED_DATA)) for p in COMMITTED_DATA.rglob("*") if p.is_file())
    assert copied == tracked_data_files(REPO)
    assert list_runs(COMMITTED_DATA / "cherrypy-speed", "full")  # and it holds runs to read


def a_users_runs(clone: Path) -> list[Path]:
    """Runs a user makes on top of a checkout, each copied from a real committed run under a newer id:
    a full run, a quick run and a sweep of cherrypy-speed, and a full run of wsgi-servers."""
    made = []
    for recipe, profile, source_profile in (
        ("cherrypy-speed", "full", "full"),
        ("cherrypy-speed", "quick", "full"),
        ("cherrypy-speed", "sweep", "sweep"),
        ("wsgi-servers", "full", "full"),
    ):
        source = list_runs(clone / "data" / recipe, source_profile)[0]
        target = clone / "data" / recipe / f"29991231T235959.000000Z-{profile}"
        shutil.copytree(source, target)
        made.append(target)
    return made


@pytest.mark.integration
def test_runs_a_user_adds_change_neither_the_committed_copy_nor_the_data_reading_tests(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--shared", str(REPO), str(clone)], check=True)
    for code in ("tests", "benchsite"):  # the code as it is now (maybe not committed yet), on HEAD's data
        shutil.rmtree(clone / code)
        shutil.copytree(REPO / code, clone / code, ignore=shutil.ignore_patterns("__pycache__"))
    before = tracked_data_files(clone)
    for run in a_users_runs(clone):
        assert run.name in {p.name for p in list_runs(run.parent)}  # the newest run of its recipe now
    assert tracked_data_files(clone) == before
    copied = copy_committed_data(clone, tmp_path / "copy")
    assert not list((copied / "cherrypy-speed").glob("29991231T*"))
    # The tests that once broke on a user's newest run pass with these runs in place.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not integration",
            "tests/test_compare.py",
            "tests/test_statistics.py",
            "tests/test_export.py",
        ],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert " passed" in result.stdout.splitlines()[-1]
