"""Contributing a run made elsewhere: `invoke add-run PATH` checks it whole, then copies it into data/.

A run joins the site only as it was measured: its run.json must read (any known format version, its
machine's id matching its fingerprint), name a recipe this checkout has, with subjects and cells
the recipe declares, and every raw output must parse to the figures stored beside it. It is copied
through a staging folder and renamed into place, never over an existing run; the page keeps showing
its reference machine's run, and the new run's machine joins the verdicts with its own row.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.model.recipe import load_recipe
from benchsite.model.run import RUN_FILE, RunDocument
from benchsite.records import read_json
from benchsite.results.integrity import duplicate_error, identities
from benchsite.results.store import STAGING_PREFIX, list_runs, load_run, load_view, profile_of, write_json
from benchsite.results.view import RunView

MAX_FILE_BYTES = 64 * 1024 * 1024  # a raw output, log or run.json larger than this is no run's


def _plain_file(path: Path) -> os.stat_result:
    """The file's status, if it is a plain file a run may hold: regular, one link, not too large."""
    try:
        status = os.lstat(path)
    except OSError as error:
        raise BenchError(f"{path}: cannot be read ({error.strerror})") from None
    if stat.S_ISLNK(status.st_mode):
        raise BenchError(f"{path}: a run may hold no symbolic links: copy the real files")
    if not stat.S_ISREG(status.st_mode):
        raise BenchError(f"{path}: not a regular file (a pipe, socket or device): a run holds only files")
    if status.st_nlink > 1:
        raise BenchError(f"{path}: a hard link to a file elsewhere: copy the real file into the run")
    if status.st_size > MAX_FILE_BYTES:
        raise BenchError(f"{path}: {status.st_size:,} bytes, over the {MAX_FILE_BYTES:,} a run's file may have")
    return status


def described_files(run: RunDocument) -> tuple[set[str], tuple[str, ...]]:
    """The files a run's record names (relative paths), and the prefixes of those it keeps whole (each
    subject's rendered configs and its flame graphs)."""
    names = [s.name for s in run.subjects] + [s.name for s in run.skipped]
    files = {RUN_FILE}
    for _, cell in run.every_cell():
        for rep in cell.repetitions:
            files |= {rep.raw_output, str(Path(rep.raw_output).with_suffix(".stderr.txt"))}
            files |= {rep.memory_output} if rep.memory_output else set()
    files |= {s.idle_memory_output for s in run.subjects if s.idle_memory_output}
    for name in names:
        files |= {f"logs/{name}{suffix}.log" for suffix in ("", "-prepare", "-callgrind")}
    return files, tuple(
        f"{folder}/{name}{sep}" for name in names for folder, sep in (("configs", "/"), ("flame", "__"))
    )


def _check_files(path: Path, run: RunDocument) -> list[str]:
    """Every file under the run folder, each plain and named by the run's record; anything else refused."""
    files, folders = described_files(run)
    found = []
    for folder, subfolders, names in os.walk(path, followlinks=False):
        for name in [*subfolders, *names]:
            entry = Path(folder) / name
            if entry.is_symlink():
                raise BenchError(f"{entry}: a run may hold no symbolic links: copy the real files")
        for name in names:
            entry = Path(folder) / name
            relative = entry.relative_to(path).as_posix()
            _plain_file(entry)
            if relative not in files and not relative.startswith(folders):
                raise BenchError(
                    f"{entry}: not part of the run (its {RUN_FILE} names no such file): remove it and add the run again"
                )
            found.append(relative)
    return sorted(found)


def _copy_file(source: Path, target: Path) -> None:
    """Copy one plain file without following a link or waiting on a pipe, and check what was written."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
    descriptor = os.open(source, flags)
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise BenchError(f"{source}: not a regular file: a run holds only files")
        content = handle.read(MAX_FILE_BYTES + 1)
    if len(content) > MAX_FILE_BYTES:
        raise BenchError(f"{source}: over the {MAX_FILE_BYTES:,} bytes a run's file may have")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    if hashlib.sha256(target.read_bytes()).digest() != hashlib.sha256(content).digest():
        raise BenchError(f"{target}: the copy does not read back as written: check the disk")


def checked_run(path: Path, recipes_dir: Path, conf_dir: Path) -> RunView:
    """The run at `path`, refused with one line saying why if any part of it does not hold up."""
    if not (path / RUN_FILE).exists() and not (path / RUN_FILE).is_symlink():
        raise BenchError(f"{path}: not a run directory (no {RUN_FILE}): give the folder `invoke recipe` wrote")
    _plain_file(path / RUN_FILE)  # before it is read: a pipe would block, a huge file would not fit
    run = load_run(path)
    _check_files(path, run)
    if run.run_id != path.name:
        raise BenchError(f"{path}: the folder is named {path.name!r} but its run is {run.run_id!r}: rename it back")
    recipe = load_recipe(run.recipe, recipes_dir, conf_dir)
    subjects = {s.name for s in recipe.subjects}
    cells = {c.name for c in recipe.cells}
    for subject in run.subjects:
        unknown = [c.name for c in subject.cells if c.name not in cells]
        if subject.name not in subjects or unknown:
            raise BenchError(
                f"{run.run_file}: {subject.name} {', '.join(unknown)} is not in recipe {run.recipe!r} here: "
                "update this checkout (git pull) to the recipe the run was made with"
            )
    return RunView(run).require_raw_agreement("a run joins only as it was measured")


def known_machine_names(data_dir: Path) -> dict[str, str]:
    """{machine id: name} of every run under data_dir, the oldest run's name where runs disagree."""
    names: dict[str, str] = {}
    for run_file in sorted(data_dir.glob(f"*/*/{RUN_FILE}"), key=lambda p: p.parent.name):
        try:
            machine = read_json(run_file).get("machine") or {}
        except BenchError:
            continue  # a damaged run is reported where it is read; it names no machine here
        if isinstance(machine, dict) and isinstance(machine.get("id"), str) and isinstance(machine.get("name"), str):
            names.setdefault(machine["id"], machine["name"])
    return names


def add_run(path: Path, data_dir: Path, recipes_dir: Path, conf_dir: Path) -> tuple[RunDocument, Path, str | None]:
    """Check a run made elsewhere and copy it into data/<recipe>/<run-id>/; the copy is whole or absent.
    A run of a machine data/ already knows under another name takes the known name (one machine, one name);
    the name it came with is returned."""
    path = path.resolve()
    checked = checked_run(path, recipes_dir, conf_dir)
    run = checked.run
    if profile_of(path).endswith("quick"):
        raise BenchError(
            f"{path}: a {profile_of(path)} run is a smoke test that git ignores (only your own `invoke docs --profile "
            f"{profile_of(path)}` shows it): add a full run (`.venv/bin/invoke recipe {run.recipe}`)"
        )
    known = known_machine_names(data_dir).get(run.machine.id)
    renamed_from = run.machine.name if known is not None and known != run.machine.name else None
    target = data_dir / run.recipe / run.run_id
    if target.exists():
        raise BenchError(f"{target} already exists: this run was added before")
    mine = set(identities(run, checked.content_digest))
    for other in list_runs(data_dir / run.recipe):
        view = load_view(other)
        if mine & set(identities(view.run, view.content_digest)):
            raise duplicate_error(run, view.run)
    staging = target.with_name(STAGING_PREFIX + run.run_id)
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for relative in _check_files(path, run):  # exactly the files the run describes, checked again
            _copy_file(path / relative, staging / relative)
        if renamed_from is not None:
            document = read_json(staging / RUN_FILE)
            document["machine"]["name"] = known
            write_json(staging / RUN_FILE, document, compact=True)
        staging.rename(target)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise BenchError(
            f"cannot copy {path} to {target} ({error.strerror}): free some space or fix permissions"
        ) from None
    except BaseException:  # a refused file, an interrupt: nothing is left in data/
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return load_run(target), target, renamed_from
