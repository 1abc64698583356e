"""The verdict today's run gives on each original conclusion, with the published value beside it.

Today's figures follow the one rule of `figures`: a flagged cell decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from benchsite.model.published import AnyClaim, FastestClaim, KeepaliveClaim, Published, RatioClaim
from benchsite.model.run import RunDocument
from benchsite.results.figures import figure, usable_figure

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
COULD_NOT_RUN = "could not run"


class Figures(Protocol):
    """Where a claim reads its numbers: today's run or the published page."""

    def rps(self, subject: str, cell: str) -> float | None: ...

    def keepalive_honoured(self, subject: str, cell: str) -> bool | None: ...

    def cpu_us(self, subject: str, cell: str) -> float | None: ...

    def subjects(self) -> list[str]: ...

    def why_not(self, subject: str, cell: str) -> str | None: ...


class RunFigures:
    """Today's medians; a flagged cell gives no figure (and says why)."""

    def __init__(self, run: RunDocument) -> None:
        self.run = run

    def rps(self, subject: str, cell: str) -> float | None:
        found = usable_figure(self.run, subject, cell)
        return found.summary.rps_median if found else None

    def keepalive_honoured(self, subject: str, cell: str) -> bool | None:
        found = usable_figure(self.run, subject, cell)
        return found.summary.keepalive_honoured if found else None

    def cpu_us(self, subject: str, cell: str) -> float | None:
        """The load's own CPU per request: for a client under test, the client's."""
        found = usable_figure(self.run, subject, cell)
        return found.summary.tool_cpu_us_per_request_median if found else None

    def subjects(self) -> list[str]:
        return [subject.name for subject in self.run.measured]

    def why_not(self, subject: str, cell: str) -> str | None:
        found = figure(self.run, subject, cell)  # None: it did not run, the verdict says so
        return None if found is None or found.usable else f"{subject} {cell} flagged: {'; '.join(found.flags)}"


class PublishedFigures:
    """The original page's single runs."""

    def __init__(self, published: Published) -> None:
        self.published = published

    def rps(self, subject: str, cell: str) -> float | None:
        found = self.published.figure(subject, cell)
        return found.requests_per_s if found else None

    def keepalive_honoured(self, subject: str, cell: str) -> bool | None:
        found = self.published.figure(subject, cell)
        return found.result.keepalive_honoured if found and found.result else None

    def cpu_us(self, subject: str, cell: str) -> float | None:
        found = self.published.figure(subject, cell)
        return found.cpu_us_per_request if found else None

    def subjects(self) -> list[str]:
        return list(dict.fromkeys(result.subject for result in self.published.results))

    def why_not(self, subject: str, cell: str) -> str | None:
        return None


@dataclass(frozen=True)
class Verdict:
    """A claim's outcome on today's data, with the published value beside it."""

    claim: AnyClaim
    status: str
    today: str
    published: str


def _fastest(claim: FastestClaim, figures: Figures) -> tuple[bool | None, str]:
    """Whether the subject beat every competitor with a usable figure in every cell, and the count."""
    competitors = [s for s in (claim.among or figures.subjects()) if s != claim.subject]
    wins, beaten_by, not_compared = 0, [], []
    for cell in claim.cells:
        own = figures.rps(claim.subject, cell)
        if own is None:
            return None, figures.why_not(claim.subject, cell) or "—"
        rivals = {}
        for rival in competitors:
            value = figures.rps(rival, cell)
            if value is not None:
                rivals[rival] = value
            elif figures.why_not(rival, cell):
                not_compared.append(f"{rival} {cell}")
        best = max(rivals, key=rivals.__getitem__, default=None)
        if best is None or own > rivals[best]:
            wins += 1
        else:
            beaten_by.append(f"{cell}: {best}")
    detail = f"fastest at {wins} of {len(claim.cells)}"
    detail += f" (beaten {'; '.join(beaten_by)})" if beaten_by else ""
    detail += f"; flagged, not compared: {', '.join(not_compared)}" if not_compared else ""
    return wins == len(claim.cells), detail


def _ratio(claim: RatioClaim, figures: Figures) -> tuple[float | None, str]:
    value = figures.rps if claim.metric == "rps" else figures.cpu_us
    top, bottom = value(*claim.numerator), value(*claim.denominator)
    if top is None or bottom is None or bottom == 0:
        reasons = [r for r in (figures.why_not(*claim.numerator), figures.why_not(*claim.denominator)) if r]
        return None, "; ".join(reasons) or "—"
    return top / bottom, f"{top / bottom:.3f}"


def _holds(claim: AnyClaim, figures: Figures) -> tuple[bool | None, str]:
    """Whether the rule holds on these figures (None: no usable figure), and the deciding value."""
    if isinstance(claim, FastestClaim):
        return _fastest(claim, figures)
    if isinstance(claim, KeepaliveClaim):
        honoured = figures.keepalive_honoured(claim.subject, claim.cell)
        if honoured is None:
            return None, figures.why_not(claim.subject, claim.cell) or "—"
        return honoured == claim.honoured, "honoured" if honoured else "not honoured"
    ratio, shown = _ratio(claim, figures)
    if ratio is None:
        return None, shown
    holds = (claim.at_least is None or ratio >= claim.at_least) and (claim.at_most is None or ratio <= claim.at_most)
    return holds, shown


def evaluate(claim: AnyClaim, today: Figures, published: Figures) -> Verdict:
    """Decide a claim on today's figures; show the published value beside it."""
    holds, today_value = _holds(claim, today)
    _, published_value = _holds(claim, published)
    status = COULD_NOT_RUN if holds is None else REPRODUCED if holds else NOT_REPRODUCED
    return Verdict(claim=claim, status=status, today=today_value, published=published_value)


def verdicts(run: RunDocument, published: Published) -> list[Verdict]:
    """Every claim of the original page decided on one run."""
    today, before = RunFigures(run), PublishedFigures(published)
    return [evaluate(claim, today, before) for claim in published.claims]
