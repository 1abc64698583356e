"""`invoke add-run PATH`: a run made elsewhere checked whole and copied into data/, and what happened in one line;
`invoke upgrade-data`: every stored record rewritten in the current format."""

from __future__ import annotations

from pathlib import Path

from benchsite.results.contribute import add_run
from benchsite.results.upgrading import upgrade_data_dir


def add_run_said(path: Path, data_dir: Path, recipes_dir: Path, conf_dir: Path, root: Path) -> str:
    """Add the run at `path` to `data_dir`; the line that says where it went, under which machine name and why."""
    run, target, renamed_from = add_run(path, data_dir, recipes_dir, conf_dir)
    shown = target.relative_to(root) if target.is_relative_to(root) else target
    known = (
        f"; the run named it {renamed_from!r}, but data/ has runs of a machine with the same fingerprint (CPU "
        f"model, CPUs, memory, kernel series, pinning) as {run.machine.name!r}: one machine, one name, so the "
        "pages show it as that"
        if renamed_from
        else ""
    )
    return (
        f"added {shown} (machine {run.machine.name}, id {run.machine.id}{known}); "
        "build the site with `.venv/bin/invoke docs` and commit the run directory"
    )


def upgraded(directory: Path) -> list[str]:
    """Every stored run.json and overhead.json under `directory` rewritten in the current format, a line each."""
    return [f"upgraded {path.relative_to(directory)} {what}" for path, what in upgrade_data_dir(directory)]
