"""What commands print besides progress: a run's verdicts, a busy run's line, a comparison, the fault report."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from benchsite.harness.experiments.faults import Trial
from benchsite.results.change_words import change_said
from benchsite.results.compare import CellChange, WorkChange
from benchsite.results.factors import MORE_INSTRUCTIONS
from benchsite.results.latency import latency_figures, queue_said
from benchsite.results.machines import by_machine
from benchsite.results.newest import alone, pooled_said
from benchsite.results.published import Published
from benchsite.results.store import load_view, recipe_views
from benchsite.results.view import RunView

if TYPE_CHECKING:
    from benchsite.model.overhead import OverheadRecord


def say(line: str) -> None:
    """A line for the user, beside the progress display (standard error)."""
    print(line, file=sys.stderr)


def print_verdicts(run_dir: Path, published: Published) -> None:
    """The run's verdicts on the page's claims in the page's words (badges, decided on this run alone, as the page's
    newest-run line says them), what the page does with the run, the listen queue where it set a tail, and which
    claims needed further rounds."""
    view = load_view(run_dir)
    rounds = view.run.rounds
    groups = by_machine(recipe_views(run_dir.parent, view.run.profile.name), published.reference_machine)
    table = Table(title=f"This run alone ({view.run.machine.name}); {pooled_said(view, groups)}")
    for header in ("Claim", "Badge", "This run [95 % interval]", "Rule"):
        table.add_column(header, overflow="fold")
    for verdict in alone(view, published):
        table.add_row(verdict.claim.id, verdict.badge.upper(), verdict.today, verdict.claim.threshold)
    console = Console(stderr=True)
    console.print(table)
    for line in queue_said(latency_figures(view.run)):
        console.print(line, highlight=False)
    if rounds is not None and rounds.further_repetitions:
        console.print(
            f"{rounds.made} rounds in all ({rounds.further_repetitions} repetitions in further rounds for "
            f"claims the first {rounds.minimum} left inconclusive, or for disturbed rounds); stopped: {rounds.stopped}",
            highlight=False,
        )


def say_if_busy(view: RunView) -> None:
    """One line when the run was measured on a busy machine: what the site will do with it, and what to do; and
    where a profile with no further rounds left disturbed repetitions, how many quiet ones it got and what would
    measure them again."""
    disturbed, judged = view.disturbed
    if disturbed and not view.run.profile.max_rounds:
        say(
            f"{judged - disturbed} of {judged} repetitions quiet; the {disturbed} disturbed were not measured again: "
            f"the {view.run.profile.name} profile makes no further rounds (a profile with max_rounds does, as the "
            "full one may; or re-run on a quiet machine)"
        )
    if view.busy:
        say(
            f"{view.interference_said()}: its disturbed repetitions are lower bounds that decide nothing (re-run on a "
            "quiet machine for more, or pass --accept-busy to count the disturbed ones too)"
        )


def print_changes(a: RunView, b: RunView, changes: list[CellChange]) -> None:
    """`invoke compare`'s table: each cell's geometric means and B ÷ A with its simultaneous interval."""
    table = Table(
        title=f"{a.run.title}: B ÷ A, req/s (A = {a.run.run_id}, B = {b.run.run_id}); change = B's geometric mean ÷ "
        f"A's, its interval simultaneous over the {len(changes)} cells compared (Bonferroni); disturbed repetitions "
        "left out"
    )
    for header in ("Subject", "Cell", "A geometric mean", "B geometric mean", "Change [simultaneous 95 %]"):
        table.add_column(header)
    for change in changes:
        said = change_said(change.change, change.changed, margin=0.0, note=change.note)  # the A/B page's words
        table.add_row(change.subject, change.cell, _number(change.mean_a), _number(change.mean_b), said)
    Console().print(table)


def print_work(a: RunView, b: RunView, changes: list[WorkChange]) -> None:
    """`invoke compare`'s second table: instructions per request where both runs counted them."""
    table = Table(
        title=f"Work: instructions per request under callgrind, B ÷ A (A = {a.run.run_id}, B = {b.run.run_id}); "
        f"intervals from the batches, simultaneous over the {len(changes)} cells counted"
    )
    for header in ("Subject", "Cell", "A", "B", "Change [simultaneous 95 %]"):
        table.add_column(header)
    for change in changes:
        said = change_said(change.change, change.changed, words=MORE_INSTRUCTIONS)
        table.add_row(change.subject, change.cell, _number(change.per_request_a), _number(change.per_request_b), said)
    Console().print(table)


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def print_trials(trials: list[Trial]) -> None:
    """`invoke faults`'s report: each trial, the exit codes by signal, and what was left in all."""
    for each in trials:
        lock = " lock held" if each.lock_held else ""
        state = "clean" if each.clean else f"LEFT {each.processes} {each.ports} {each.staging} {each.workroots}{lock}"
        sent = "" if each.signalled else " (ended before its signal)"
        print(
            f"{each.recipe:26} {each.signal_name:8} after {each.delay_s:5.2f} s: exit {each.exit_code:4}  {state}{sent}"
        )
    interrupted = [each for each in trials if each.signalled]
    codes = Counter((each.signal_name, each.exit_code) for each in interrupted)
    print("signal, exit code: trials —", ", ".join(f"{s} {code}: {n}" for (s, code), n in sorted(codes.items())))
    print(
        f"{len(interrupted)} runs interrupted, {len(trials) - len(interrupted)} ended before their signal; in all: "
        f"{sum(len(t.processes) for t in trials)} leftover processes, "
        f"{sum(len(t.ports) for t in trials)} bound ports, {sum(t.staging for t in trials)} partial run folders, "
        f"{sum(t.workroots for t in trials)} temporary folders, {sum(t.lock_held for t in trials)} locks held"
    )


def overhead_ratio(record: OverheadRecord) -> str:
    """The harness's req/s over bare ab's, round by round, as the terminal says it (or why there is none)."""
    from benchsite.results.claims import fmt_interval
    from benchsite.results.intervals import level_label
    from benchsite.results.overhead import harness_over_bare

    found = harness_over_bare(record)
    if found is None or not found.bounded:
        return "no interval: fewer than two rounds"
    return f"{fmt_interval(found, digits=3)} ({level_label(found.level)} interval)"
