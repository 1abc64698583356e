"""The keep-alive claim: whether a subject kept its connections alive in a keep-alive cell."""

from __future__ import annotations

from typing import Literal

from benchsite.records import Name
from benchsite.results.claims.base import ClaimBase, MachineEvidence, Outcome, State, unusable
from benchsite.results.evidence import Evidence, Pooled
from benchsite.results.originals import OriginalFigures
from benchsite.results.view import RunView


class KeepaliveClaim(ClaimBase):
    """Whether a subject kept connections alive for ab -k."""

    kind: Literal["keepalive"] = "keepalive"
    subject: Name
    cell: Name
    honoured: bool

    @property
    def threshold(self) -> str:
        return "honoured" if self.honoured else "not honoured"

    @property
    def rule(self) -> str:
        return f"{self.subject} {self.cell}: keep-alive {self.threshold}"

    def subjects_named(self) -> set[str]:
        return {self.subject}

    def _renamed(self, names: dict[str, str]) -> dict[str, object]:
        return {"subject": names.get(self.subject, self.subject)}

    def cells_named(self) -> set[str]:
        return {self.cell}

    def decide(self, view: Evidence) -> Outcome:
        if not view.usable(self.subject, self.cell):
            return unusable(view, [(self.subject, self.cell)])
        seen, repetitions = view.keepalive_seen(self.subject, self.cell)
        if len(seen) != 1:
            return Outcome(
                State.INCONCLUSIVE, "keep-alive honoured in some repetitions, not in others" if seen else "not measured"
            )
        honoured = seen.pop()
        shown = f"keep-alive {'honoured' if honoured else 'not honoured'} in all {repetitions} repetitions"
        kept = "kept" if honoured else "did not keep"
        agrees = "as claimed" if honoured == self.honoured else "the opposite of the claim"
        reading = f"{view.named(self.subject)} {kept} connections alive in all {repetitions} repetitions: {agrees}."
        return Outcome(State.HOLDS if honoured == self.honoured else State.DOES_NOT_HOLD, shown, reading=reading)

    def published_value(self, published: OriginalFigures) -> str:
        found = published.figure(self.subject, self.cell)
        honoured = found.result.keepalive_honoured if found and found.result else None
        return "—" if honoured is None else "honoured" if honoured else "not honoured"

    def evidence(self, machines: list[MachineEvidence]) -> str:
        """Decided on what the load tool saw, not on a ratio: a sentence per machine."""
        parts = []
        for machine in machines:
            seen, repetitions = Pooled(machine.views).keepalive_seen(self.subject, self.cell)
            said = (
                "not measured"
                if not seen
                else "honoured and not, in different repetitions"
                if len(seen) > 1
                else f"{'honoured' if True in seen else 'not honoured'} in all {repetitions} repetitions"
            )
            parts.append(f"{machine.label}: {said}")
        return f"Decided on what the load tool reported, not on a ratio: {'; '.join(parts)}."

    def round_ratios(self, view: RunView) -> list[float] | None:
        return None  # decided on what the load tool saw, not on a ratio
