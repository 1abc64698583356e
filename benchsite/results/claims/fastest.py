"""The fastest claim: a subject had the highest requests/s in every one of some cells."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from benchsite.records import Name, Seq
from benchsite.results.claims.base import (
    ClaimBase,
    EvidenceRow,
    Forest,
    MachineEvidence,
    Outcome,
    State,
    against,
    unusable,
)
from benchsite.results.evidence import Evidence, Pooled
from benchsite.results.factors import factor, factor_range
from benchsite.results.intervals import Interval, paired_rounds
from benchsite.results.metrics import RPS
from benchsite.results.originals import OriginalFigures
from benchsite.results.view import RunView, SubjectCell


class FastestClaim(ClaimBase):
    """A subject had the highest requests/s in every one of the cells."""

    kind: Literal["fastest"] = "fastest"
    subject: Name
    cells: Seq[Name] = Field(min_length=1)
    among: Seq[Name] = ()  # the competitors; empty: every subject

    @property
    def threshold(self) -> str:
        return "every ratio to a competitor > 1"

    @property
    def rule(self) -> str:
        among = f" among {', '.join(self.among)}" if self.among else ""
        return f"{self.subject}: highest req/s{among} at {', '.join(self.cells)}"

    def subjects_named(self) -> set[str]:
        return {self.subject, *self.among}

    def _renamed(self, names: dict[str, str]) -> dict[str, object]:
        return {
            "subject": names.get(self.subject, self.subject),
            # "every subject" becomes every subject of the same copy, not of the others
            "among": tuple(names.get(name, name) for name in (self.among or names)),
        }

    def cells_named(self) -> set[str]:
        return set(self.cells)

    def decide(self, view: Evidence) -> Outcome:
        """Holds when the subject is surely ahead of every competitor in every cell; does not hold when
        some competitor is surely ahead in some cell; flagged competitors are named, not compared, and the
        state says how many comparisons that left out."""
        competitors = [s for s in (self.among or view.measured_names()) if s != self.subject]
        behind: list[str] = []
        unsure: list[str] = []
        not_compared: list[str] = []
        needs: list[SubjectCell] = []
        comparisons = 0
        compared_with: list[str] = []  # the competitors set against it, by the names a reader knows
        for cell in self.cells:
            if not view.usable(self.subject, cell):
                return unusable(view, [(self.subject, cell)])
            for rival in competitors:
                if not view.ran(rival, cell):
                    continue  # it does not run here
                comparisons += 1
                estimate = view.ratio((self.subject, cell), (rival, cell))
                if estimate is None:
                    not_compared.append(view.named(rival, cell))
                    continue
                if view.named(rival) not in compared_with:
                    compared_with.append(view.named(rival))
                state = against(estimate, 1.0, None)
                if state == State.DOES_NOT_HOLD:
                    behind.append(f"{view.named(rival, cell)} ({factor(estimate.value)})")
                elif state == State.INCONCLUSIVE:
                    unsure.append(f"{view.named(rival, cell)} ({factor_range(estimate)})")
                    needs += [(self.subject, cell), (rival, cell)]
        flagged = f"; flagged, not compared: {_some(not_compared)}" if not_compared else ""
        listed = tuple(f"flagged, not compared: {item}" for item in not_compared)
        left_out = f"{len(not_compared)} of {comparisons} comparisons not made" if not_compared else ""
        subject = view.named(self.subject)
        if behind:  # what decides it; the unsure comparisons no longer matter
            details = tuple(f"surely behind {item}" for item in behind) + listed
            reading = f"{subject} is not the fastest: surely behind {_some(behind)}."
            today = f"surely behind {_some(behind)}{flagged}"
            return Outcome(State.DOES_NOT_HOLD, today, details=_long(details), not_compared=left_out, reading=reading)
        if unsure:
            details = tuple(f"not surely ahead of {item}" for item in unsure) + listed
            reading = f"whether {subject} is ahead of {_some(unsure)} is not settled; ahead of every other one."
            return Outcome(
                State.INCONCLUSIVE,
                f"not surely ahead of {_some(unsure)}{flagged}",
                tuple(dict.fromkeys(needs)),
                details=_long(details),
                not_compared=left_out,
                reading=reading,
            )
        cells = f"in all {len(self.cells)} cells" if len(self.cells) > 1 else f"at {view.cell_named(self.cells[0])}"
        compared = comparisons - len(not_compared)
        if not compared:  # nothing was set against it: no comparison decides anything
            why = (
                "its only comparison could not be made"
                if comparisons == 1
                else f"none of its {comparisons} comparisons could be made"
                if comparisons
                else "no competitor ran beside it"
            )
            reading = f"whether {subject} is the fastest is not known: {why}."
            return Outcome(
                State.TOO_LITTLE, f"{why}{flagged}", details=_long(listed), not_compared=left_out, reading=reading
            )
        others = f"each of the {len(compared_with)} it was compared with ({', '.join(compared_with)})"
        reading = f"{subject} is surely faster than {others}, {cells} ({compared} comparisons)."
        today = f"surely ahead of every competitor, {cells}{flagged}"
        return Outcome(State.HOLDS, today, details=_long(listed), not_compared=left_out, reading=reading)

    def published_value(self, published: OriginalFigures) -> str:
        ahead = 0
        for cell in self.cells:
            own = published.figure(self.subject, cell)
            if own is None or own.requests_per_s is None:
                return "—"
            rivals = [
                r.requests_per_s
                for r in published.results
                if r.cell == cell
                and r.subject != self.subject
                and r.requests_per_s is not None
                and (not self.among or r.subject in self.among)
            ]
            ahead += all(own.requests_per_s > rival for rival in rivals)
        return f"fastest at {ahead} of {len(self.cells)}"

    def _closest(self, evidence: Evidence, cell: str) -> tuple[str, Interval] | None:
        """The competitor closest to the subject in one cell, with the subject ÷ it (None: none measured)."""
        rivals = [r for r in (self.among or evidence.measured_names()) if r != self.subject]
        estimates = [
            (rival, found)
            for rival in rivals
            if evidence.ran(rival, cell) and (found := evidence.ratio((self.subject, cell), (rival, cell)))
        ]
        return min(estimates, key=lambda pair: pair[1].value) if estimates else None

    def evidence(self, machines: list[MachineEvidence]) -> Forest:
        """Per machine and cell, the subject ÷ its closest competitor there (pooled over the machine's runs)."""
        rows = []
        for machine in machines:
            pooled = len(machine.views) > 1
            for cell in self.cells:
                closest = self._closest(Pooled(machine.views), cell)
                if closest is None:
                    rows.append(EvidenceRow(f"{machine.label} · {cell}", None, pooled))
                else:
                    rows.append(EvidenceRow(f"{machine.label} · {cell} ÷ {closest[0]}", closest[1], pooled))
        return Forest(tuple(rows), f"{self.subject} ÷ its closest competitor in each cell, {RPS.unit}", (1.0,))

    def round_ratios(self, view: RunView) -> list[float] | None:
        """The subject ÷ its closest competitor, round by round, in the first of its cells."""
        closest = self._closest(view, self.cells[0])
        if closest is None:
            return None
        top, bottom = view.round_values(self.subject, self.cells[0]), view.round_values(closest[0], self.cells[0])
        return None if top is None or bottom is None else paired_rounds(top, bottom)


SHOWN = 3


def _some(items: list[str], shown: int = SHOWN) -> str:
    """The first few of a list, and how many more (the page lists them all under it)."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def _long(items: tuple[str, ...]) -> tuple[str, ...]:
    """The full list, where the text shortened one (else nothing to add)."""
    return items if len(items) > SHOWN else ()
