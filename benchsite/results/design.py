"""A run's comparison design, chosen once from its profile: how its comparisons of copies are judged and said.

Fixed: the profile's rounds, then a t interval over the paired rounds (`intervals.ratio_interval`); every cell
is measured in every round, and none is "decided" before the rounds end. Sequential: the comparisons looked at
after every round with a confidence sequence (`results.sequential`), valid at every look; a cell whose time has
answered (a change, or none beyond the smallest change that matters) is decided and measured no more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from benchsite.model.conf import Profile
from benchsite.results.intervals import Interval, detectable_change, ratio_interval
from benchsite.results.sequential import sequence_detectable, sequence_interval
from benchsite.results.view import RunView


class Compared(Protocol):
    """A comparison as a design judges it (`comparing.PairedCell`): whether its time has answered."""

    @property
    def time_decided(self) -> bool: ...


@dataclass(frozen=True)
class FixedDesign:
    """The rounds the profile sets, then one look; `smallest_change` is the profile's (0: none named)."""

    smallest_change: float = 0.0
    validity = ""  # what its intervals hold at, before "simultaneous over the cells"

    def interval(self, ratios: Sequence[float], level: float) -> Interval | None:
        """The interval of B ÷ A from the per-round (or per-start) ratios, at `level`."""
        return ratio_interval(ratios, level)

    def detectable(self, ratios: Sequence[float], level: float, margin: float) -> float | None:
        """The smallest change it would call 80 % of the time, from the ratios' own spread (what a run sees)."""
        return detectable_change(ratios, level, margin)

    def decided(self, cell: Compared) -> bool:
        """Whether the cell's time has answered before the rounds ended (a fixed run measures every cell in every
        round: never)."""
        return False

    def ended_said(self, view: RunView) -> str:
        """How the run's rounds ended, in a sentence of its own ("" where the rounds were the profile's)."""
        return ""

    def intervals_said(self, view: RunView) -> str:
        """The end of the A/B page's sentence on its intervals."""
        return "."

    def sweep_said(self, view: RunView) -> str:
        """What a release sweep's page says of its rounds ("" for the profile's rounds)."""
        return ""


@dataclass(frozen=True)
class SequentialDesign(FixedDesign):
    """Looked at after every round, each cell until its comparisons are decided (or the rounds run out): the fixed
    design's rounds with a look after each."""

    validity = "valid at every round looked at, "

    def interval(self, ratios: Sequence[float], level: float) -> Interval | None:
        return sequence_interval(ratios, level)

    def detectable(self, ratios: Sequence[float], level: float, margin: float) -> float | None:
        return sequence_detectable(ratios, level, margin)

    def decided(self, cell: Compared) -> bool:
        return cell.time_decided

    def ended_said(self, view: RunView) -> str:
        """ "Sequential: looked at after every round, stopped after …" ("" where the run recorded no rounds)."""
        return f"Sequential: looked at after every round, {stopped_said(view)}" if view.run.rounds else ""

    def intervals_said(self, view: RunView) -> str:
        return (
            "; in time, valid at every round the run looked at (a confidence sequence). " + self.ended_said(view) + "."
        )

    def sweep_said(self, view: RunView) -> str:
        return (
            "The sweep was sequential: looked at after every round, a release's cell was measured again only "
            "while one of its comparisons was undecided, and its time intervals hold at every look; it "
            + stopped_said(view)
            + ". "
        )


ComparisonDesign = FixedDesign | SequentialDesign
FIXED = FixedDesign()  # the design of a comparison made outside a run's own rounds (none named: fixed)


def design_of(profile: Profile) -> ComparisonDesign:
    """The design a profile asks for, with its smallest change that matters: sequential where its further rounds
    follow the comparisons of copies, fixed otherwise."""
    chosen = SequentialDesign if profile.further_rounds_by == "comparisons" else FixedDesign
    return chosen(profile.smallest_change)


def stopped_said(view: RunView) -> str:
    """After how many rounds and seconds a sequential run stopped, why, and what each repetition's time bound
    cut short."""
    rounds = view.run.rounds
    if rounds is None:
        return ""
    said = f"stopped after {rounds.made} rounds and {rounds.elapsed_s:.0f} s of measuring ({rounds.stopped})"
    cut = bounded_repetitions(view)
    return said + (f"; ended at the {view.run.profile.seconds:g} s bound: {cut}" if cut else "")


def bounded_repetitions(view: RunView) -> str:
    """ "Raw WSGI server (cheroot) [B: cheroot==8.1.0] -c 1 -k (20 requests a repetition)": the cells whose
    repetitions the time bound ended early, as a reader knows them."""
    found = []
    for subject in view.run.subjects:
        for cell in subject.cells:
            made = [rep.result.complete_requests for rep in cell.repetitions if rep.result is not None]
            ceiling = cell.request_ceiling
            if made and ceiling and max(made) < ceiling:
                span = f"{min(made):,}" if min(made) == max(made) else f"{min(made):,}-{max(made):,}"
                found.append(f"{subject.label} {view.run.cell_label(cell.name)} ({span} requests a repetition)")
    return ", ".join(found)
