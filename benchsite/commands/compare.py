"""`invoke compare`: two runs of one recipe, found by directory or RECIPE/RUN-ID, compared cell by cell."""

from __future__ import annotations

from pathlib import Path

from benchsite.commands.terminal import print_changes, say
from benchsite.errors import BenchError
from benchsite.results.compare import busy_runs, compare_runs, different_setups
from benchsite.results.store import load_view
from benchsite.results.view import RunView


def found_run(given: str, data_dir: Path) -> RunView:
    """A run named by its directory or as RECIPE/RUN-ID under data/; a wrong name is a one-line error."""
    path = Path(given) if Path(given).is_dir() else data_dir / given
    if not path.is_dir():
        raise BenchError(f"no run {given!r}: give a run directory or RECIPE/RUN-ID (see `.venv/bin/invoke recipes`)")
    return load_view(path)


def compare(run_a: str, run_b: str, data_dir: Path) -> None:
    """Warnings first (a busy run, different machines), then the table of changes."""
    a, b = found_run(run_a, data_dir), found_run(run_b, data_dir)
    if a.run.recipe != b.run.recipe:
        raise BenchError(
            f"{a.run.run_id} is a run of {a.run.recipe}, {b.run.run_id} of {b.run.recipe}: compare runs of one recipe"
        )
    for warning in (busy_runs(a, b), different_setups(a, b)):
        if warning:
            say(warning)
    changes = compare_runs(a, b)
    if not changes:
        raise BenchError(
            f"{a.run.run_id} and {b.run.run_id} share no subject measured in the same cell: compare two runs that "
            "ran the same subjects and cells"
        )
    print_changes(a, b, changes)
