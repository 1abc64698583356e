"""`invoke versus`: did it change? Two variants of a recipe's subjects measured in one run, interleaved round by
round, then B ÷ A in time (paired rounds) and in work (instructions per request)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchsite.commands.terminal import say
from benchsite.errors import BenchError
from benchsite.results.versus import change_said, paired_cells
from benchsite.results.view import RunView

EXPERIMENT_DIR = Path("experiments") / "versus"  # under data/: the A/B runs, one folder per recipe


def print_versus(view: RunView) -> None:
    """The table of B ÷ A in each cell, in both currencies, and what it means."""
    cells = paired_cells(view)
    if not cells:
        raise BenchError(f"{view.run.run_id} has no subject measured as an A and a B copy: it is not an A/B run")
    rounds = view.run.rounds.made if view.run.rounds else view.run.profile.rounds
    table = Table(
        title=f"{view.run.title}: B ÷ A, measured in one run ({rounds} rounds); intervals "
        f"simultaneous over the cells (Bonferroni, 95 %)"
    )
    for header in ("Subject", "Cell", "Time: req/s B ÷ A", "Work: instructions/request B ÷ A"):
        table.add_column(header)
    for cell in cells:
        table.add_row(
            cell.subject,
            cell.cell,
            change_said(cell.time, cell.time_changed),
            change_said(cell.work, cell.work_changed),
        )
    Console().print(table)
    for cell in cells:
        if cell.work_changed and not cell.time_changed and cell.work is not None:
            say(
                f"{cell.subject} {cell.cell}: time cannot tell, but work changed by "
                f"{100 * (cell.work.value - 1):+.1f} % (instructions do not move with the machine's load)"
            )
