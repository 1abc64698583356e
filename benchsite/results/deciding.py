"""What a sequential run still has to measure: the comparisons of copies it makes (an A/B run's B against A; a
sweep's releases against the newest and each against the one before), each looked at after every round, and
the copies' cells of those not yet decided."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchsite.model.run import RunDocument
from benchsite.results.change_words import bound_said, needs_factors
from benchsite.results.comparing import PairedCell, compare_copies, comparison_sets
from benchsite.results.design import design_of
from benchsite.results.factors import FASTER, factor, percent_or_factor
from benchsite.results.view import RunView


@dataclass(frozen=True)
class Looked:
    """A sequential run's comparisons after a round: each one, and the copies' cells still to measure."""

    cells: tuple[PairedCell, ...]

    @property
    def undecided(self) -> tuple[PairedCell, ...]:
        return tuple(cell for cell in self.cells if not cell.time_decided)

    @property
    def to_measure(self) -> set[tuple[str, str]]:
        """(copy, cell) of every side of an undecided comparison."""
        return {(copy, cell.cell) for cell in self.undecided for copy in (cell.a, cell.b)}

    def said(self) -> str:
        """ "3 of 4 comparisons decided (2 changed)": where the run stands."""
        changed = sum(cell.time_changed for cell in self.cells)
        decided = len(self.cells) - len(self.undecided)
        return f"{decided} of {len(self.cells)} comparisons decided in time ({changed} changed)"


def looked(view: RunView) -> Looked:
    """Every comparison of the run as it stands, by the run's own rule (sequential intervals where it is one)."""
    return Looked(tuple(cell for pairs in comparison_sets(view) for cell in compare_copies(view, pairs)))


def first_rounds(run: RunDocument, made: int, smallest_change: float | None = None) -> RunDocument:
    """A run as a sequential design would have seen it after `made` rounds: its repetitions of later rounds
    left out, its intervals the sequential ones (at `smallest_change`, where given). Before a round stops a
    sequential run, its rounds are the same as a fixed run's: replaying the fixed run's rounds one by one shows
    when and how the sequential design would have answered on the very same measurements."""
    cut = [
        subject.model_copy(
            update={
                "cells": tuple(
                    cell.model_copy(update={"repetitions": tuple(r for r in cell.repetitions if r.index <= made)})
                    for cell in subject.cells
                    if any(r.index <= made for r in cell.repetitions)
                )
            }
        )
        for subject in run.subjects
    ]
    profile = run.profile.model_copy(
        update={
            "sequential": True,
            "smallest_change": run.profile.smallest_change if smallest_change is None else smallest_change,
        }
    )
    return run.model_copy(update={"subjects": tuple(s for s in cut if s.cells), "profile": profile})


@dataclass(frozen=True)
class Replayed:
    """Where a sequential design would have stopped on a run's rounds: the round, when in the run it ended, and
    its comparisons then (None: not decided by the run's last round)."""

    stopped_at: int | None
    elapsed_s: float | None
    state: Looked


def replayed(run: RunDocument, smallest_change: float | None = None) -> Replayed:
    """The sequential rule applied after each of a run's rounds in turn, stopping at the first round after which
    every comparison is decided."""
    last = max((rep.index for s in run.subjects for c in s.cells for rep in c.repetitions), default=0)
    state = Looked(())
    for made in range(2, last + 1):
        state = looked(RunView(first_rounds(run, made, smallest_change)))
        if state.cells and not state.undecided:
            ended = max(
                (rep.started_after_s or 0.0) + rep.wall_s
                for s in run.subjects
                for c in s.cells
                for rep in c.repetitions
                if rep.index <= made
            )
            return Replayed(made, ended, state)
    return Replayed(None, None, state)


def answered_said(view: RunView, cells: Sequence[PairedCell]) -> str:
    """A sequential run's answer first, in words: "Answered after 7 rounds (61 s): -c 1 -k 696× slower, -c 10 -k
    91.2× slower; -c 1 and -c 10 undecided when the rounds stopped (...)"."""
    rounds = view.run.rounds
    if rounds is None or not design_of(view.run.profile).ended_said(view):  # the profile's rounds: no early answer
        return ""
    told, open_ = [], []
    factors = any(needs_factors(cell.time) for cell in cells)  # as the table says them: one format

    def said(ratio: float) -> str:
        return factor(ratio, FASTER) if factors else percent_or_factor(ratio, FASTER)

    for cell in cells:
        name = f"{cell.subject} {view.run.cell_label(cell.cell)}"
        if cell.time_changed and cell.time is not None and cell.time_bound:  # a bound, as the table says it
            bound = bound_said(cell.time, cell.time_bound, cell.weakest_round, cell.time_margin, factors=factors)
            told.append(f"{name} {bound}")
        elif cell.time_changed and cell.time is not None:
            told.append(f"{name} {said(cell.time.value)}")
        elif cell.time_decided:
            told.append(f"{name} no change beyond ±{100 * cell.design.smallest_change:g} %")
        else:
            open_.append(name)
    answer = f"Answered after {rounds.made} rounds ({rounds.elapsed_s:.0f} s): " + (
        "; ".join(told) or "nothing decided"
    )
    if open_:
        why = "its time budget ended" if rounds.stopped.startswith("the time budget") else "its rounds ran out"
        answer += f"; {', '.join(open_)} undecided when {why} (each within its interval below)"
    return answer + "."
