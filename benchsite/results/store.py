"""Run directories under data/: written whole or not at all, read back as typed records.

One run is one directory, data/<recipe>/<run-id>/, holding run.json (the RunDocument)
and raw/, the load tool's output verbatim.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchsite.errors import BenchError
from benchsite.model.base import read_json
from benchsite.model.overhead import OVERHEAD_DIR, OVERHEAD_FILE, OverheadRecord
from benchsite.model.run import FORMAT_VERSION, RUN_FILE, RunDocument

STAGING_PREFIX = ".incomplete-"


def load_run(path: Path) -> RunDocument:
    """Read one run directory (upgrading an older format); any problem is a BenchError naming the file."""
    run_file = path / RUN_FILE
    if not run_file.is_file():
        raise BenchError(f"{run_file}: no such file: re-run the recipe or pick another run")
    return RunDocument.read(read_json(run_file), run_file).stored_at(path)


def list_runs(recipe_data_dir: Path, profile: str | None = None) -> list[Path]:
    """Finished run directories of one recipe, oldest first (run ids sort by time); of one profile if given."""
    if not recipe_data_dir.is_dir():
        return []
    runs = sorted(path.parent for path in recipe_data_dir.glob(f"*/{RUN_FILE}") if not path.parent.name.startswith("."))
    return [run for run in runs if profile is None or run.name.endswith(f"-{profile}")]


def latest_run(recipe_data_dir: Path, profile: str | None = None) -> Path | None:
    runs = list_runs(recipe_data_dir, profile)
    return runs[-1] if runs else None


def shown_run(recipe_data_dir: Path, profile: str) -> Path | None:
    """The run a page shows: the latest of the published profile; only where there is none, the latest of any."""
    return latest_run(recipe_data_dir, profile) or latest_run(recipe_data_dir)


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
        raise


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write JSON with sorted keys to a temporary name, then rename it into place."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        temporary.write_text(json.dumps(document, indent=1, sort_keys=True, allow_nan=False) + "\n")
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise BenchError(f"cannot write {path} ({error.strerror}): free some space or fix the permissions") from None


def upgrade_data_dir(data_dir: Path) -> list[tuple[Path, object]]:
    """Rewrite every run.json and overhead.json below data_dir in the current format; what was upgraded."""
    upgraded: list[tuple[Path, object]] = []
    for path in sorted(data_dir.glob(f"*/*/{RUN_FILE}")):
        data = read_json(path)
        if isinstance(data, dict) and data.get("format_version") != FORMAT_VERSION:
            write_json(path, RunDocument.read(data, path).to_json())
            upgraded.append((path, data.get("format_version")))
    for path in sorted((data_dir / OVERHEAD_DIR).glob(f"*/{OVERHEAD_FILE}")):
        data = read_json(path)
        record = OverheadRecord.read(data, path)
        if isinstance(data, dict) and data.get("format_version") != record.format_version:
            write_json(path, record.to_json())
            upgraded.append((path, data.get("format_version")))
    return upgraded
