"""An A/B run's sides judged before the machine's lock: a malformed, empty or same-as-A side is said at once,
even while another benchmark holds the machine, and two sides that run the same thing need --aa."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_machine_lock import WAIT_S, holder, lock_env

from benchsite.errors import BenchError
from benchsite.harness.variants.copies import changed_subjects, sides
from benchsite.harness.variants.precheck import checked_sides
from benchsite.model.recipe import load_recipe
from benchsite.model.variant import Variant
from conftest import INVOKE, REPO

RECIPE = "cherrypy-speed"
RECIPE_DIR = REPO / "recipes" / RECIPE
INSTALLED_CHEROOT = "11.1.2"  # requirements.txt's pin, which the checkout runs


def checked(a: str, b: str, subjects: tuple[str, ...] = ("raw-wsgi",), aa: bool = False) -> tuple[Variant, Variant]:
    return checked_sides(load_recipe(RECIPE, REPO / "recipes", REPO / "conf"), (a, b), subjects, REPO, aa)


def changed_copy(tmp_path: Path, name: str = "side", comment: str = "") -> Path:
    side = tmp_path / name
    side.mkdir()
    (side / "raw_wsgi_app.py").write_text((RECIPE_DIR / "raw_wsgi_app.py").read_text() + comment)
    return side


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("checkout", f"dir:{RECIPE_DIR}"),  # the checkout's own recipe folder
        ("checkout", "dir:{copy}"),  # a byte-identical copy of it
        ("dir:{copy}", "dir:{copy}"),
        ("checkout", f"cheroot=={INSTALLED_CHEROOT}"),  # the version the checkout runs
        ("opt:--threads=10", "opt:--threads=10"),
        ("release:cheroot==8.6.0", "release:cheroot==8.6.0"),
    ],
)
def test_two_sides_that_run_the_same_thing_are_an_aa_run_refused_unless_asked_for(
    tmp_path: Path, a: str, b: str
) -> None:
    copy = changed_copy(tmp_path)
    a, b = a.format(copy=copy), b.format(copy=copy)
    with pytest.raises(BenchError, match=r"runs the same as A .*: an A/A run; pass --aa to measure it anyway"):
        checked(a, b)
    assert checked(a, b, aa=True)  # asked for: measured


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("checkout", "dir:{changed}"),
        ("dir:{copy}", "dir:{changed}"),
        ("checkout", "cheroot==10.0.1"),
        ("checkout", f"release:cheroot=={INSTALLED_CHEROOT}"),  # the dependencies of its day, not the checkout's
        ("checkout", "release:cheroot==8.6.0"),
    ],
)
def test_sides_that_differ_pass(tmp_path: Path, a: str, b: str) -> None:
    copy, changed = changed_copy(tmp_path), changed_copy(tmp_path, "changed", "# changed\n")
    checked(a.format(copy=copy, changed=changed), b.format(copy=copy, changed=changed))


def test_a_folder_that_holds_none_of_the_subjects_files_is_said_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(BenchError, match="changes a subject of cherrypy-speed: name the subjects with --subjects"):
        checked("checkout", f"dir:{tmp_path / 'empty'}", ())


def test_a_pin_no_measured_subject_runs_is_said_before_anything_runs() -> None:
    with pytest.raises(BenchError, match="no measured subject of cherrypy-speed runs django"):
        checked("checkout", "django==4.2", ("raw-wsgi",))


@pytest.mark.parametrize(
    ("side", "said", "more"),
    [
        ("nonsense", "-b 'nonsense' is not a variant", ()),
        ("dir:/no/such/folder", "no folder /no/such/folder", ()),
        (f"dir:{RECIPE_DIR}", "an A/A run; pass --aa to measure it anyway", ()),
        ("django==4.2", "no measured subject of cherrypy-speed runs django", ()),
        ("release:cheroot==0.0.1", "the registry has no release 0.0.1 of cheroot", ()),
        ("cheroot==8.0.0", "profile 'sweep-quick' of cherrypy-speed sweeps releases", ("--profile", "sweep-quick")),
        ("cheroot==8.0.0", "profile 'full' of cherrypy-speed measures a page's latency profile", ("--profile", "full")),
    ],
)
def test_a_wrong_side_is_said_at_once_while_another_benchmark_holds_the_machine(
    tmp_path: Path, side: str, said: str, more: tuple[str, ...]
) -> None:
    """The faults round's wait: behind another benchmark, a side's real error came after the lock (9 min 20 s);
    a profile an A/B run cannot honour, or a release the registry does not have, is said as soon."""
    lock = tmp_path / "machine.lock"
    with holder(lock) as other:
        result = subprocess.run(
            [
                *INVOKE,
                "versus",
                RECIPE,
                "-b",
                side,
                "--subjects",
                "raw-wsgi",
                "--data-dir",
                str(tmp_path / "data"),
                *more,
            ],
            cwd=REPO,
            env=lock_env(lock),
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        assert other.poll() is None  # the lock was held throughout
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert said in result.stderr and "waiting for another benchmark" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "data").exists()


def test_an_aa_run_asked_for_goes_on_to_wait_for_the_machine(tmp_path: Path) -> None:
    lock = tmp_path / "machine.lock"
    with holder(lock):
        result = subprocess.run(
            [*INVOKE, "versus", RECIPE, "-b", f"dir:{RECIPE_DIR}", "--aa", "--subjects", "raw-wsgi", "--no-wait"],
            cwd=REPO,
            env=lock_env(lock),
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
    assert result.returncode == 1 and "another benchmark holds this machine" in result.stderr


def test_a_folder_side_measures_only_the_subjects_whose_files_it_changes(tmp_path: Path) -> None:
    """The A/B page's example with a copy of the whole recipe folder: framework_app.py changed, raw_wsgi_app.py
    byte for byte the checkout's. Only the framework is measured (the raw server's identical copy was)."""
    side = tmp_path / "patched"
    shutil.copytree(RECIPE_DIR, side)
    (side / "framework_app.py").write_text((side / "framework_app.py").read_text() + "\n# patched\n")
    recipe = load_recipe(RECIPE, REPO / "recipes", REPO / "conf")
    named = sides(Variant("checkout", ""), Variant("dir", str(side)))
    assert changed_subjects(recipe, named, ()) == {"framework"}
    (side / "framework_app.py").write_text((RECIPE_DIR / "framework_app.py").read_text())  # nothing changed now
    with pytest.raises(BenchError, match="changes a subject of cherrypy-speed: name the subjects with --subjects"):
        changed_subjects(recipe, named, ())
