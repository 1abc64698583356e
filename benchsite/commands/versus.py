"""`invoke versus`: did it change? Two variants of a recipe's subjects measured in one run, interleaved round by
round, then B ÷ A in time (paired rounds) and in work (instructions per request)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchsite.commands.terminal import say
from benchsite.errors import BenchError
from benchsite.results.change_words import blind_said, cells_said, fmt_sees
from benchsite.results.comparing import paired_cells, paired_subjects, time_untold
from benchsite.results.design import design_of
from benchsite.results.latency import copies_said
from benchsite.results.view import RunView

EXPERIMENT_DIR = Path("experiments") / "versus"  # under data/: the A/B runs, one folder per recipe
BLIND_TIME = 0.05  # time that cannot see a 5 % change cannot answer the usual question: say why


def print_versus(view: RunView) -> None:
    """The table of B ÷ A in each cell, in both currencies, and what it means."""
    cells = paired_cells(view)
    if not cells:
        raise BenchError(f"{view.run.run_id} has no subject measured as an A and a B copy: it is not an A/B run")
    rounds = view.run.rounds.made if view.run.rounds else view.run.profile.rounds
    starts = f", servers started {len(view.run.starts)} times" if view.run.starts else ""
    profile = view.run.profile
    design = design_of(profile)
    table = Table(
        title=f"{view.run.title}: B ÷ A, measured in one run ({rounds} rounds{starts}); intervals "
        f"{design.validity}simultaneous over the cells (Bonferroni, 95 %)"
    )
    for header in ("Subject", "Cell", "Time: req/s B ÷ A", "sees", "Work: instructions/request B ÷ A", "sees"):
        table.add_column(header)
    for cell, (time_said, work_said) in zip(cells, cells_said(cells), strict=True):
        table.add_row(
            cell.subject,
            cell.cell,
            time_said,
            "decided" if design.decided(cell) else fmt_sees(cell.time_could_see),
            work_said,
            fmt_sees(cell.work_could_see),
        )
    Console().print(table)
    if ended := design.ended_said(view):
        say(ended)
    say(
        "sees: the smallest change this run would have called in that cell 80 % of the time, from the spread of "
        "its own rounds (time) and batches (work)"
    )
    blind = [
        sees
        for cell in cells
        if (sees := cell.time_could_see) is not None and sees > BLIND_TIME and not design.decided(cell)
    ]
    if blind:
        reps = [rep for subject in view.run.subjects for each in subject.cells for rep in each.repetitions]
        disturbed = sum(rep.disturbed for rep in reps)
        say(blind_said(blind, len(cells), rounds, (disturbed, len(reps))))
    pairs = paired_subjects(view)
    for line in copies_said(view.run, pairs):
        say(line)
    for cell in cells:
        untold = time_untold(view, cell)
        if untold:
            say(untold)
        if cell.work_changed and not cell.time_changed and cell.work is not None:
            say(
                f"{cell.subject} {cell.cell}: time cannot tell, but work changed by "
                f"{100 * (cell.work.value - 1):+.1f} % (instructions do not move with the machine's load)"
            )
