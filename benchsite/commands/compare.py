"""`invoke compare`: two runs of one recipe, found by directory or RECIPE/RUN-ID, compared cell by cell."""

from __future__ import annotations

from pathlib import Path

from benchsite.commands.terminal import print_changes, print_work, say
from benchsite.errors import BenchError
from benchsite.results.compare import (
    MIN_RUNS_FOR_DRIFT,
    Drift,
    blind_below,
    busy_runs,
    compare_runs,
    compare_work,
    different_setups,
    run_drift,
)
from benchsite.results.store import list_runs, load_view
from benchsite.results.view import RunView


def found_run(given: str, data_dir: Path) -> RunView:
    """A run named by its directory or as RECIPE/RUN-ID under data/; a wrong name is a one-line error."""
    path = Path(given) if Path(given).is_dir() else data_dir / given
    if not path.is_dir():
        raise BenchError(f"no run {given!r}: give a run directory or RECIPE/RUN-ID (see `.venv/bin/invoke recipes`)")
    return load_view(path).require_raw_agreement()


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
    drift = machine_drift(a, data_dir)
    changes = compare_runs(a, b, drift)
    if not changes:
        raise BenchError(
            f"{a.run.run_id} and {b.run.run_id} share no subject measured in the same cell: compare two runs that "
            "ran the same subjects and cells"
        )
    say(drift_said(drift, a, blind_below(drift, len(changes)), len(changes)))
    print_changes(a, b, changes)
    if drift.median is not None:
        say(f"to see changes under what the drift lets two runs show, measure both in one run: {versus_command(a, b)}")
    work = compare_work(a, b)
    if work:
        print_work(a, b, work)
    timed = {(change.subject, change.cell): change for change in changes}
    for found in work:
        time_change = timed.get((found.subject, found.cell))
        if found.changed and found.change is not None and time_change is not None and not time_change.changed:
            say(
                f"{found.subject} {found.cell}: time cannot tell across these runs, but work changed by "
                f"{100 * (found.change.value - 1):+.1f} % (instructions do not move with the machine's load)"
            )


def versus_command(a: RunView, b: RunView) -> str:
    """The `invoke versus` command that measures what differs between two runs, in one run."""
    recipe = a.run.recipe
    packages_a, packages_b = a.run.environment.packages, b.run.environment.packages
    changed = [name for name in packages_a if name in packages_b and packages_a[name] != packages_b[name]]
    if changed:
        name = changed[0]
        sides = f"-a {name}=={packages_a[name]} -b {name}=={packages_b[name]}"
    else:
        commits = [view.run.environment.git_commit.split()[0] for view in (a, b)]
        known = all(len(commit) == 40 for commit in commits) and commits[0] != commits[1]
        sides = f"-a rev:{commits[0][:12]} -b rev:{commits[1][:12]}" if known else "-a rev:OLD-REVISION -b checkout"
    return f".venv/bin/invoke versus {recipe} {sides}"


def machine_drift(a: RunView, data_dir: Path) -> Drift:
    """The run-to-run drift of A's machine: from its runs of the recipe in A's profile under data/, busy
    runs left out."""
    views = []
    for path in list_runs(data_dir / a.run.recipe):
        try:
            views.append(load_view(path).require_raw_agreement())
        except BenchError:
            continue  # a damaged run estimates nothing (`invoke docs` names it)
    same = [
        view
        for view in views
        if view.run.machine.id == a.run.machine.id and view.run.profile.name == a.run.profile.name and not view.busy
    ]
    return run_drift(same)


def drift_said(drift: Drift, a: RunView, blind: float | None, cells: int) -> str:
    """One line on the drift, the one figure beside each run's own noise that the intervals count: what it is,
    and the smallest change it lets two runs show."""
    where = f"{a.run.machine.name}'s {a.run.profile.name} runs of {a.run.recipe}"
    if drift.median is None or blind is None:
        return (
            f"no run-to-run drift known: {where} are fewer than {MIN_RUNS_FOR_DRIFT}; the intervals count each "
            "run's own noise only, and runs of the same code can differ beyond them"
        )
    return (
        f"run-to-run drift ±{100 * drift.median:.1f} %: how much two runs of the same code differ in a cell here "
        f"(the median over {drift.runs} of {where}); every interval below counts it, so over {cells} "
        f"cell{'s' if cells > 1 else ''} these two runs cannot show a change under ±{100 * blind:.0f} %"
    )
