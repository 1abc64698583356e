"""Run directories under data/: written whole or not at all, read back as typed records.

One run is one directory, data/<recipe>/<run-id>/, holding run.json (the RunDocument)
and raw/, the load tool's output verbatim.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchsite.errors import BenchError
from benchsite.model.columns import stored_form
from benchsite.model.portable import make_portable
from benchsite.model.run import RUN_FILE, RunDocument
from benchsite.model.upgrade import read_run
from benchsite.records import read_json
from benchsite.results.view import RunView

STAGING_PREFIX = ".incomplete-"


def load_run(path: Path) -> RunDocument:
    """Read one run directory (upgrading an older format); any problem is a BenchError naming the file."""
    run_file = path / RUN_FILE
    if not run_file.is_file():
        raise BenchError(f"{run_file}: no such file: re-run the recipe or pick another run")
    return read_run(read_json(run_file), run_file).stored_at(path)


_VIEWS: dict[tuple[Path, int, int], RunView] = {}


def load_view(path: Path) -> RunView:
    """The cached view of a run directory: read once per state of its run.json, then shared by every
    directive that shows it."""
    run_file = path / RUN_FILE
    try:
        stat = run_file.stat()
    except OSError:
        return RunView(load_run(path))  # load_run says what is wrong
    key = (run_file.resolve(), stat.st_mtime_ns, stat.st_size)
    if key not in _VIEWS:
        _VIEWS[key] = RunView(load_run(path))
    return _VIEWS[key]


def forget_views() -> None:
    """Let go of every cached view (a build that has read its pages and needs the memory for writing)."""
    _VIEWS.clear()


def list_runs(recipe_data_dir: Path, profile: str | None = None) -> list[Path]:
    """Finished run directories of one recipe, oldest first (run ids sort by time); of one profile if given."""
    if not recipe_data_dir.is_dir():
        return []
    runs = sorted(path.parent for path in recipe_data_dir.glob(f"*/{RUN_FILE}") if not path.parent.name.startswith("."))
    return [run for run in runs if profile is None or profile_of(run) == profile]


def profile_of(run_dir: Path) -> str:
    """The profile a run's id names: 20261126T161355.552195Z-cheroot-sweep -> cheroot-sweep (not "sweep")."""
    return run_dir.name.partition("Z-")[2]


def latest_run(recipe_data_dir: Path, profile: str | None = None) -> Path | None:
    runs = list_runs(recipe_data_dir, profile)
    return runs[-1] if runs else None


def runs_shown(recipe_data_dir: Path, profile: str) -> list[Path]:
    """The runs pages read: every run of the published profile; only where there is none, every run (a new
    page's quick runs). A quick run never joins the published ones."""
    return list_runs(recipe_data_dir, profile) or list_runs(recipe_data_dir)


def recipe_views(recipe_data_dir: Path, profile: str) -> list[RunView]:
    """The runs pages read (`runs_shown`), oldest first, each as its cached view; where some cannot be read, one
    error naming every one of them (a build that stopped at the first would need a rebuild per bad run)."""
    views, problems = [], []
    for path in runs_shown(recipe_data_dir, profile):
        try:
            views.append(load_view(path))
        except BenchError as error:
            problems.append(str(error))
    if len(problems) > 1:
        raise BenchError(f"{len(problems)} runs cannot be read: " + " | ".join(problems))
    if problems:
        raise BenchError(problems[0])
    return views


def new_run_id(profile: str) -> str:
    """A run id that sorts by time, to the microsecond: 20261122T013000.123456Z-full."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ") + f"-{profile}"


@contextmanager
def staged_run_directory(recipe_data_dir: Path, run_id: str) -> Iterator[Path]:
    """A staging directory that becomes data/<recipe>/<run_id> only if the block succeeds.

    On any exception (Ctrl-C included) the staging directory is removed, so
    an interrupted run leaves nothing behind; an existing run is never replaced.
    """
    final = recipe_data_dir / run_id
    staging = recipe_data_dir / f"{STAGING_PREFIX}{run_id}"
    made_recipe_dir = not recipe_data_dir.exists()
    try:
        recipe_data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BenchError(
            f"cannot write in {recipe_data_dir} ({error.strerror}): choose a writable --data-dir or free some space"
        ) from None
    if final.exists():
        raise BenchError(f"{final} already exists: run again")
    try:
        staging.mkdir()
    except FileExistsError:
        raise BenchError(f"{staging} already exists: another run is writing there; run again") from None
    except OSError as error:
        raise BenchError(
            f"cannot write in {recipe_data_dir} ({error.strerror}): choose a writable --data-dir or free some space"
        ) from None
    try:
        yield staging
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if made_recipe_dir:  # a recipe's first run that failed leaves no empty folder behind
            with contextlib.suppress(OSError):
                recipe_data_dir.rmdir()
        raise


def write_text(path: Path, text: str) -> None:
    """Write a file of a run being recorded (parents made); a full disk or a denied write is one line."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as error:
        raise BenchError(f"cannot write {path} ({error.strerror}): free some space or fix the permissions") from None


def write_json(path: Path, document: dict[str, Any], compact: bool = False) -> None:
    """Write JSON with sorted keys to a temporary name, then rename it into place; `compact`: without
    indentation (run.json: `python -m json.tool` shows it indented)."""
    temporary = path.with_name(path.name + ".tmp")
    layout: dict[str, Any] = {"separators": (",", ":")} if compact else {"indent": 1}
    try:
        temporary.write_text(json.dumps(document, sort_keys=True, allow_nan=False, **layout) + "\n")
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise BenchError(f"cannot write {path} ({error.strerror}): free some space or fix the permissions") from None


def write_portable(path: Path, document: dict[str, Any], placeholders: Mapping[str, str]) -> None:
    """Write a document with the machine's paths replaced by their placeholders; a run's in its stored
    form (repetitions as columns, no indentation)."""
    portable = json.loads(make_portable(json.dumps(document), placeholders))
    if path.name == RUN_FILE:
        write_json(path, stored_form(portable), compact=True)
    else:
        write_json(path, portable)


def make_files_portable(run_dir: Path, placeholders: Mapping[str, str]) -> int:
    """The same for the run's text files beside the document: configs, logs, the tools' outputs; how many
    changed.

    Only paths and the server host's address change in a tool's output; its figures stay as it printed them.
    """
    changed = 0
    for path in [*run_dir.glob("configs/**/*"), *run_dir.glob("logs/*"), *run_dir.glob("raw/**/*")]:
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # not text: nothing of ours was written into it
        portable = make_portable(text, placeholders)
        if portable != text:
            path.write_text(portable, encoding="utf-8")
            changed += 1
    return changed
