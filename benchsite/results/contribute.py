"""Contributing a run made elsewhere: `invoke add-run PATH` checks it whole, then copies it into data/.

A run joins the site only as it was measured: its run.json must read (any known format version, its
machine's id matching its fingerprint), name a recipe this checkout has, with subjects and cells
the recipe declares, and every raw output must parse to the figures stored beside it. It is copied
through a staging folder and renamed into place, never over an existing run; the page keeps showing
its reference machine's run, and the new run's machine joins the verdicts with its own row.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.model.recipe import load_recipe
from benchsite.model.run import RUN_FILE, RunDocument
from benchsite.records import read_json
from benchsite.results.store import STAGING_PREFIX, load_run, reparse_mismatches, write_json


def checked_run(path: Path, recipes_dir: Path, conf_dir: Path) -> RunDocument:
    """The run at `path`, refused with one line saying why if any part of it does not hold up."""
    if not (path / RUN_FILE).is_file():
        raise BenchError(f"{path}: not a run directory (no {RUN_FILE}): give the folder `invoke recipe` wrote")
    links = [p for p in path.rglob("*") if p.is_symlink()]
    if links:
        raise BenchError(f"{links[0]}: a run may hold no symbolic links: copy the real files")
    run = load_run(path)
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
    mismatches = reparse_mismatches(run)
    if mismatches:
        raise BenchError(
            f"{run.run_file}: {mismatches[0]}"
            + (f" (and {len(mismatches) - 1} more)" if len(mismatches) > 1 else "")
            + ": a run joins only as it was measured"
        )
    return run


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
    run = checked_run(path.resolve(), recipes_dir, conf_dir)
    known = known_machine_names(data_dir).get(run.machine.id)
    renamed_from = run.machine.name if known is not None and known != run.machine.name else None
    target = data_dir / run.recipe / run.run_id
    if target.exists():
        raise BenchError(f"{target} already exists: this run was added before")
    staging = target.with_name(STAGING_PREFIX + run.run_id)
    shutil.rmtree(staging, ignore_errors=True)
    try:
        shutil.copytree(path, staging, symlinks=False)
        if renamed_from is not None:
            document = read_json(staging / RUN_FILE)
            document["machine"]["name"] = known
            write_json(staging / RUN_FILE, document)
        staging.rename(target)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise BenchError(
            f"cannot copy {path} to {target} ({error.strerror}): free some space or fix permissions"
        ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return load_run(target), target, renamed_from
