"""The original pages' conclusions as data, and the verdict today's run gives on each.

A claim is a rule over figures: a ratio of median requests/s between two
(subject, cell) pairs within bounds, whether keep-alive was honoured, or
whether a subject had the highest requests/s in the given cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from benchsite.errors import BenchError
from benchsite.published import Published
from benchsite.stats import summarize
from benchsite.store import RunRecord

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
COULD_NOT_RUN = "could not run"


class Figures(Protocol):
    """Where a claim reads its numbers: today's run or the published page."""

    def rps(self, subject: str, cell: str) -> float | None: ...

    def keepalive_honoured(self, subject: str, cell: str) -> bool | None: ...

    def cpu_us(self, subject: str, cell: str) -> float | None: ...

    def subjects(self) -> list[str]: ...


class RunFigures:
    """Today's medians; a cell with any failure gives no figure."""

    def __init__(self, run: RunRecord) -> None:
        self.run = run

    def _summary(self, subject: str, cell: str):
        record = self.run.subject(subject)
        cell_record = record.cell(cell) if record else None
        if cell_record is None:
            return None
        summary = summarize(cell_record)
        return None if summary.flagged else summary

    def rps(self, subject: str, cell: str) -> float | None:
        summary = self._summary(subject, cell)
        return summary.rps_median if summary else None

    def keepalive_honoured(self, subject: str, cell: str) -> bool | None:
        summary = self._summary(subject, cell)
        return summary.keepalive_honoured if summary else None

    def cpu_us(self, subject: str, cell: str) -> float | None:
        """The load's own CPU per request: for a client under test, the client's."""
        summary = self._summary(subject, cell)
        return summary.tool_cpu_us_per_request_median if summary else None

    def subjects(self) -> list[str]:
        return [subject.name for subject in self.run.measured]


class PublishedFigures:
    """The original page's single runs."""

    def __init__(self, published: Published) -> None:
        self.published = published

    def rps(self, subject: str, cell: str) -> float | None:
        figure = self.published.figure(subject, cell)
        return figure.requests_per_s if figure else None

    def keepalive_honoured(self, subject: str, cell: str) -> bool | None:
        figure = self.published.figure(subject, cell)
        return figure.result.keepalive_honoured if figure and figure.result else None

    def cpu_us(self, subject: str, cell: str) -> float | None:
        figure = self.published.figure(subject, cell)
        return figure.transcribed_cpu_us if figure else None

    def subjects(self) -> list[str]:
        return list(dict.fromkeys(result.subject for result in self.published.results))


@dataclass(frozen=True)
class Claim:
    """One conclusion of the original page, with the rule that decides it."""

    id: str
    text: str
    kind: str  # "ratio", "keepalive" or "fastest"
    numerator: tuple[str, str] | None = None
    denominator: tuple[str, str] | None = None
    at_least: float | None = None
    at_most: float | None = None
    subject: str | None = None
    cell: str | None = None
    honoured: bool | None = None
    cells: tuple[str, ...] = ()
    among: tuple[str, ...] = ()  # competitors of a "fastest" claim; empty: every subject
    metric: str = "rps"  # ratio claims: "rps" (requests/s) or "cpu" (client CPU µs per request)

    @property
    def rule(self) -> str:
        if self.kind == "fastest":
            among = f" among {', '.join(self.among)}" if self.among else ""
            return f"{self.subject}: highest req/s{among} at {', '.join(self.cells)}"
        if self.kind == "keepalive":
            return f"{self.subject} {self.cell}: keep-alive {'honoured' if self.honoured else 'not honoured'}"
        assert self.numerator and self.denominator
        unit = "req/s" if self.metric == "rps" else "CPU µs/req"
        ratio = f"{unit} {'/'.join(self.numerator)} ÷ {'/'.join(self.denominator)}"
        bounds = []
        if self.at_least is not None:
            bounds.append(f"≥ {self.at_least:g}")
        if self.at_most is not None:
            bounds.append(f"≤ {self.at_most:g}")
        return f"{ratio} {' and '.join(bounds)}"


@dataclass(frozen=True)
class Verdict:
    """A claim's outcome on today's data, with the published value beside it."""

    claim: Claim
    status: str
    today: str
    published: str


def parse_claim(data: dict[str, Any], source: str) -> Claim:
    """Build a Claim from its TOML table; a malformed one is an error naming the file."""
    try:
        kind = data["kind"]
        common = {"id": data["id"], "text": data["text"], "kind": kind}
        if kind == "ratio":
            if "at_least" not in data and "at_most" not in data:
                raise BenchError(f"{source}: claim {data['id']!r} needs at_least or at_most")
            metric = data.get("metric", "rps")
            if metric not in ("rps", "cpu"):
                raise BenchError(f"{source}: claim {data['id']!r}: metric {metric!r} is unknown: use rps or cpu")
            return Claim(**common, numerator=tuple(data["numerator"]), denominator=tuple(data["denominator"]),
                         at_least=data.get("at_least"), at_most=data.get("at_most"), metric=metric)
        if kind == "keepalive":
            return Claim(**common, subject=data["subject"], cell=data["cell"], honoured=bool(data["honoured"]))
        if kind == "fastest":
            return Claim(**common, subject=data["subject"], cells=tuple(data["cells"]),
                         among=tuple(data.get("among", ())))
    except KeyError as error:
        raise BenchError(f"{source}: a claim lacks {error.args[0]!r}: add it") from None
    raise BenchError(f"{source}: claim kind {kind!r} is unknown: use 'ratio', 'keepalive' or 'fastest'")


def check_names(claim: Claim, subjects: set[str], cells: set[str], source: str) -> None:
    """A claim naming a subject or cell the recipe does not have is an error that names both."""
    pairs = [pair for pair in (claim.numerator, claim.denominator) if pair]
    named_subjects = {s for s, _ in pairs} | {s for s in (claim.subject, *claim.among) if s}
    named_cells = {c for _, c in pairs} | {c for c in (claim.cell, *claim.cells) if c}
    for kind, named, known in (("subject", named_subjects, subjects), ("cell", named_cells, cells)):
        unknown = sorted(named - known)
        if unknown:
            raise BenchError(f"{source}: claim {claim.id!r} names unknown {kind} {', '.join(unknown)}: "
                             f"I know about {', '.join(sorted(known))}")


def _fastest(claim: Claim, figures: Figures) -> tuple[bool | None, str]:
    """Whether the subject beat every competitor with a figure in every cell, and the count."""
    assert claim.subject
    competitors = [s for s in (claim.among or figures.subjects()) if s != claim.subject]
    wins, beaten_by = 0, []
    for cell in claim.cells:
        own = figures.rps(claim.subject, cell)
        if own is None:
            return None, "—"
        rivals = {s: rps for s in competitors if (rps := figures.rps(s, cell)) is not None}
        best = max(rivals, key=rivals.__getitem__, default=None)
        if best is None or own > rivals[best]:
            wins += 1
        else:
            beaten_by.append(f"{cell}: {best}")
    detail = f"fastest at {wins} of {len(claim.cells)}"
    return wins == len(claim.cells), detail + (f" (beaten {'; '.join(beaten_by)})" if beaten_by else "")


def _ratio(claim: Claim, figures: Figures) -> float | None:
    assert claim.numerator and claim.denominator
    value = figures.rps if claim.metric == "rps" else figures.cpu_us
    top, bottom = value(*claim.numerator), value(*claim.denominator)
    if top is None or bottom is None or bottom == 0:
        return None
    return top / bottom


def _holds(claim: Claim, figures: Figures) -> tuple[bool | None, str]:
    """Whether the rule holds on these figures (None: no figure), and the deciding value."""
    if claim.kind == "fastest":
        return _fastest(claim, figures)
    if claim.kind == "keepalive":
        assert claim.subject and claim.cell
        honoured = figures.keepalive_honoured(claim.subject, claim.cell)
        if honoured is None:
            return None, "—"
        return honoured == claim.honoured, "honoured" if honoured else "not honoured"
    ratio = _ratio(claim, figures)
    if ratio is None:
        return None, "—"
    holds = (claim.at_least is None or ratio >= claim.at_least) and (claim.at_most is None or ratio <= claim.at_most)
    return holds, f"{ratio:.3f}"


def evaluate(claim: Claim, today: Figures, published: Figures) -> Verdict:
    """Decide a claim on today's figures; show the published value beside it."""
    holds, today_value = _holds(claim, today)
    _, published_value = _holds(claim, published)
    status = COULD_NOT_RUN if holds is None else REPRODUCED if holds else NOT_REPRODUCED
    return Verdict(claim=claim, status=status, today=today_value, published=published_value)
