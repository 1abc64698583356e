"""The ratio claim: a ratio between two figures on one metric lies within bounds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field, model_validator

from benchsite.records import Name, Pair
from benchsite.results.claims.base import (
    ClaimBase,
    EvidenceRow,
    Forest,
    MachineEvidence,
    Outcome,
    State,
    against,
    fmt_interval,
    run_label,
    unusable,
)
from benchsite.results.claims.reading import Band, ratio_badge, ratio_reading
from benchsite.results.evidence import Evidence, Pooled
from benchsite.results.factors import FASTER, MORE_CPU, Direction
from benchsite.results.intervals import paired_rounds
from benchsite.results.metrics import MetricName, metric
from benchsite.results.originals import OriginalFigures
from benchsite.results.view import RunView
from benchsite.results.work import work_ratio, work_said

Bound = Annotated[float, Field(gt=0, le=1e6)]
WORDS: dict[str, Direction] = {"rps": FASTER, "load-cpu": MORE_CPU, "server-cpu": MORE_CPU}  # a ratio above 1 reads


class RatioClaim(ClaimBase):
    """numerator ÷ denominator, two (subject, cell) figures on one metric, at least and/or at most a bound."""

    kind: Literal["ratio"] = "ratio"
    numerator: Pair[Name, Name]
    denominator: Pair[Name, Name]
    at_least: Bound | None = None
    at_most: Bound | None = None
    metric: MetricName = "rps"

    @model_validator(mode="after")
    def _bounded(self) -> RatioClaim:
        if self.at_least is None and self.at_most is None:
            raise ValueError(f"claim {self.id!r} needs at_least or at_most")
        if self.at_least is not None and self.at_most is not None and self.at_least > self.at_most:
            raise ValueError(f"claim {self.id!r}: at_least {self.at_least:g} is above at_most {self.at_most:g}")
        return self

    @property
    def threshold(self) -> str:
        parts = [f"≥ {self.at_least:g}"] if self.at_least is not None else []
        parts += [f"≤ {self.at_most:g}"] if self.at_most is not None else []
        return " and ".join(parts)

    @property
    def rule(self) -> str:
        ratio = f"{metric(self.metric).unit} {'/'.join(self.numerator)} ÷ {'/'.join(self.denominator)}"
        return f"{ratio} {self.threshold}"

    def subjects_named(self) -> set[str]:
        return {self.numerator[0], self.denominator[0]}

    def _renamed(self, names: dict[str, str]) -> dict[str, object]:
        return {
            side: (names.get(pair[0], pair[0]), pair[1])
            for side, pair in (("numerator", self.numerator), ("denominator", self.denominator))
        }

    def cells_named(self) -> set[str]:
        return {self.numerator[1], self.denominator[1]}

    def decide(self, view: Evidence) -> Outcome:
        cells = [self.numerator, self.denominator]
        estimate = view.ratio(self.numerator, self.denominator, metric(self.metric))
        if estimate is None:
            return unusable(view, cells)
        state = against(estimate, self.at_least, self.at_most)
        needs = tuple(cells) if state == State.INCONCLUSIVE else ()
        upper, lower = self._named(view)
        heading = metric(self.metric).heading
        words = WORDS.get(self.metric) or Direction(f"higher in {heading}", f"lower in {heading}")
        band = Band(self.at_least, self.at_most)
        reading = ratio_reading(interval=estimate, band=band, top=upper, bottom=lower, words=words)
        said = ratio_badge(estimate, band)
        return Outcome(
            state=state,
            today=fmt_interval(estimate),
            needs=needs,
            estimate=estimate,
            rests_on=tuple(cells),
            reading=reading,
            said=said,
        )

    def _named(self, view: Evidence) -> tuple[str, str]:
        """Its two sides as a reader knows them ("the CherryPy framework at -c 1 -k", "at -c 1" where one subject
        is compared with itself)."""
        (top, top_cell), (bottom, bottom_cell) = self.numerator, self.denominator
        if top_cell == bottom_cell:
            return view.named(top), view.named(bottom)
        if top == bottom:
            return view.named(top, top_cell), f"at {view.cell_named(bottom_cell)}"
        return view.named(top, top_cell), view.named(bottom, bottom_cell)

    def published_value(self, published: OriginalFigures) -> str:
        top, bottom = published.figure(*self.numerator), published.figure(*self.denominator)
        field = metric(self.metric).published
        if top is None or bottom is None or field is None:
            return "—"
        a, b = getattr(top, field), getattr(bottom, field)
        return "—" if a is None or b is None or b == 0 else f"{a / b:.3f}"

    def evidence(self, machines: list[MachineEvidence]) -> Forest:
        """A row per run, then the machine's pooled row, machine by machine."""
        of = metric(self.metric)
        rows = []
        for machine in machines:
            estimated = 0
            for view in machine.views:
                found = view.ratio(self.numerator, self.denominator, of)
                rows.append(EvidenceRow(f"{machine.label} {run_label(view)}", found, False))
                estimated += found is not None
            if estimated > 1:  # the runs that measured both sides, pooled
                pooled = Pooled(machine.views).ratio(self.numerator, self.denominator, of)
                rows.append(EvidenceRow(f"{machine.label}, {estimated} runs pooled", pooled, True))
        what = f"{'/'.join(self.numerator)} ÷ {'/'.join(self.denominator)}, {of.unit}"
        return Forest(tuple(rows), what, tuple(b for b in (self.at_least, self.at_most) if b is not None))

    def why(self, views: Sequence[RunView]) -> str | None:
        """For a ratio of two subjects' req/s in one cell, what their counted instructions per request say, in
        the newest of the runs that counted them (None where none did)."""
        if self.metric != "rps" or self.numerator[1] != self.denominator[1]:
            return None
        counted = [view for view in views if view.run.counting is not None and view.run.counting.counts]
        if not counted:
            return None
        view = counted[-1]
        (faster, cell), (slower, _) = self.numerator, self.denominator
        ratio = work_ratio(view, slower, faster, cell)
        if ratio is None:
            return None
        said = work_said(ratio, view.run.subject_labels, timed=False)  # counted under Valgrind
        return f"Why: {said[:1].lower()}{said[1:]}"

    def round_ratios(self, view: RunView) -> list[float] | None:
        of = metric(self.metric)
        top, bottom = view.round_values(*self.numerator, of), view.round_values(*self.denominator, of)
        return None if top is None or bottom is None else paired_rounds(top, bottom)
