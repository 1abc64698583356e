"""A read-only view of one stored run that works out each figure once, for every directive and claim.

Pages ask many questions of one run (a table, a chart, a pivot and every claim read the same
figures); the view answers each from a cache, as pyperf's Benchmark caches its statistics.
"""

from __future__ import annotations

import statistics
from functools import cached_property

from benchsite.errors import BenchError
from benchsite.model.run import RunDocument
from benchsite.results.figures import Figure, tool_limited_why
from benchsite.results.integrity import ReadBack, read_back
from benchsite.results.intervals import Interval, paired_rounds, ratio_interval
from benchsite.results.metrics import METRICS, RPS, Metric, metric_values
from benchsite.results.stats import CellSummary, summarize

SubjectCell = tuple[str, str]  # (subject, cell)


class RunView:
    """One run, with its figures worked out on first use."""

    def __init__(self, run: RunDocument) -> None:
        self.run = run
        self._figures: dict[SubjectCell, Figure | None] = {}

    @cached_property
    def read_back(self) -> ReadBack:
        """Its raw outputs parsed again, once (see `integrity.read_back`)."""
        return read_back(self.run)

    @property
    def content_digest(self) -> str | None:
        """What the run is known by: the digest of what its parsers read."""
        return self.read_back.content_digest

    @property
    def raw_mismatches(self) -> list[str]:
        """Its raw outputs that do not parse to what run.json holds, or disagree with themselves."""
        return self.read_back.mismatches

    def require_raw_agreement(self, what_to_do: str = "restore the run from git") -> RunView:
        """This view, if its raw outputs are all there and agree with run.json and themselves; else a one-line
        BenchError naming the first that does not (a missing raw output is one too)."""
        if self.raw_mismatches:
            more = len(self.raw_mismatches) - 1
            raise BenchError(
                f"{self.run.run_file}: {self.raw_mismatches[0]}"
                + (f" (and {more} more)" if more else "")
                + f": {what_to_do}"
            )
        return self

    @cached_property
    def disturbed(self) -> tuple[int, int]:
        """How many of the run's repetitions were disturbed, of how many that recorded interference."""
        reps = [rep for s in self.run.subjects for c in s.cells for rep in c.repetitions]
        judged = [rep for rep in reps if rep.interference_s is not None]
        return sum(rep.disturbed for rep in judged), len(judged)

    @property
    def disturbed_share(self) -> float:
        disturbed, judged = self.disturbed
        return disturbed / judged if judged else 0.0

    @property
    def busy(self) -> bool:
        """Measured on a busy machine (more of its repetitions disturbed than its settings allow) and not
        accepted as such: pooled into its machine's verdicts with its undisturbed repetitions, labelled, and a
        page's main run only where its machine has no quiet one with as many usable figures."""
        return self.disturbed_share > self.run.settings.busy_share and not self.run.accepted_busy

    def interference_said(self) -> str:
        """The run's disturbed repetitions in words: "3 of 215 repetitions disturbed (1.4 %)"."""
        disturbed, judged = self.disturbed
        if not judged:
            return "not recorded"
        said = f"{disturbed} of {judged} repetitions disturbed ({100 * disturbed / judged:.1f} %)"
        if self.busy:
            return f"measured on a busy machine: {said}, above its limit of {100 * self.run.settings.busy_share:g} %"
        if self.run.accepted_busy and disturbed:
            return f"measured with --accept-busy, its disturbed repetitions counted (their figures may be low): {said}"
        return said

    @cached_property
    def noise_percent(self) -> float | None:
        """The run's noise: the median over its cells of req/s's CV (None where no cell has two values)."""
        cvs = [cv for summary in self.summaries.values() if (cv := summary.cv_percent()) is not None]
        return statistics.median(cvs) if cvs else None

    @cached_property
    def usable_count(self) -> int:
        """How many of its subjects' cells have a usable figure."""
        return sum(self.usable(subject, cell) for subject, cell in self.summaries)

    @cached_property
    def summaries(self) -> dict[SubjectCell, CellSummary]:
        counted = self.run.accepted_busy
        return {(s.name, c.name): summarize(c, counted) for s in self.run.subjects for c in s.cells}

    def ceiling_rps(self, cell: str) -> float | None:
        """The median req/s of the run's ceiling subject (a C server on a static file) in one cell."""
        ceiling = self.run.ceiling
        found = self.summaries.get((ceiling.name, cell)) if ceiling else None
        return found.median() if found else None

    def figure(self, subject: str, cell: str) -> Figure | None:
        """The figure of one subject in one cell, or None where it has no such cell run."""
        if (subject, cell) not in self._figures:
            self._figures[(subject, cell)] = self._figure(subject, cell)
        return self._figures[(subject, cell)]

    def _figure(self, subject_name: str, cell_name: str) -> Figure | None:
        subject = self.run.subject(subject_name)
        record = subject.cell(cell_name) if subject else None
        if subject is None or record is None:
            return None
        summary = self.summaries[(subject_name, cell_name)]
        flags = list(summary.problems)
        at_least = summary.at_least_rps()
        if at_least is not None:  # it answered; only others' work on the machine kept its figure from counting
            flags.append(
                f"every repetition disturbed by others' work on the machine (a busy machine): at least "
                f"{at_least:,.0f} req/s, a lower bound that decides nothing"
            )
        if subject.role == "server" and record.TOOL.tool_limited_at_ceiling:
            why = tool_limited_why(
                summary.median(),
                self.ceiling_rps(cell_name),
                summary.median(METRICS["load-share"]),
                summary.median(METRICS["server-share"]),
            )
            if why:
                return Figure(summary, (*flags, why), tool_limited=True)
        return Figure(summary, tuple(flags))

    def usable_figure(self, subject: str, cell: str) -> Figure | None:
        """The figure where it is usable; None where it is missing or flagged."""
        found = self.figure(subject, cell)
        return found if found is not None and found.usable else None

    def round_values(
        self, subject: str, cell: str, of: Metric = RPS, usable_only: bool = True
    ) -> dict[int, float] | None:
        """Each round's value of a cell run on a metric; None where it did not run or, with usable_only,
        where it is flagged."""
        found = self.figure(subject, cell)
        record = self.run.subject(subject)
        cell_record = record.cell(cell) if record else None
        if found is None or (usable_only and not found.usable) or cell_record is None:
            return None
        return metric_values(cell_record, of, self.run.accepted_busy)

    def ratio(
        self, top: SubjectCell, bottom: SubjectCell, of: Metric = RPS, usable_only: bool = True
    ) -> Interval | None:
        """The ratio top ÷ bottom from the rounds that measured both; None where a side is unusable."""
        a, b = self.round_values(*top, of, usable_only), self.round_values(*bottom, of, usable_only)
        if a is None or b is None:
            return None
        return ratio_interval(paired_rounds(a, b))

    def ran(self, subject: str, cell: str) -> bool:
        """Whether the subject has a cell run in this cell (usable or not)."""
        return self.figure(subject, cell) is not None

    def usable(self, subject: str, cell: str) -> bool:
        return self.usable_figure(subject, cell) is not None

    def measured_names(self) -> list[str]:
        return [subject.name for subject in self.run.measured]

    def named(self, subject: str, cell: str | None = None) -> str:
        """A subject as a reader knows it ("Waitress"), at a cell where one is given ("Waitress at -c 10 -k")."""
        label = self.run.subject_labels.get(subject, subject)
        return label if cell is None else f"{label} at {self.run.cell_label(cell)}"

    def cell_named(self, cell: str) -> str:
        """A cell as a reader knows it: "-c 10 -k"."""
        return self.run.cell_label(cell)

    def keepalive_seen(self, subject: str, cell: str) -> tuple[set[bool], int]:
        """Whether keep-alive was honoured, as the usable repetitions say it (one value each), and how many
        repetitions there were."""
        record = self.run.subject(subject)
        cell_run = record.cell(cell) if record else None
        if cell_run is None or not self.usable(subject, cell):
            return set(), 0
        seen = {rep.result.keepalive_honoured for rep in cell_run.repetitions if rep.ok and rep.result is not None}
        return {value for value in seen if value is not None}, len(cell_run.repetitions)

    def tool_limited(self, cells: list[SubjectCell]) -> bool:
        """Whether every unusable figure among these ran and only the load tool held it back."""
        found = [self.figure(*cell) for cell in cells]
        unusable = [f for f in found if f is None or not f.usable]
        return bool(unusable) and all(f is not None and f.tool_limited_only for f in unusable)

    def busy_only(self, cells: list[SubjectCell]) -> bool:
        """Whether every unusable figure among these answered and only a busy machine kept it from counting."""
        found = [self.figure(*cell) for cell in cells]
        unusable = [f for f in found if f is None or not f.usable]
        return bool(unusable) and all(
            f is not None and f.summary.at_least_rps() is not None and len(f.flags) == 1 for f in unusable
        )

    def why_not(self, cells: list[SubjectCell]) -> str:
        """Why these figures cannot decide anything: which did not run, which are flagged and why."""
        reasons = []
        for subject, cell in cells:
            found = self.figure(subject, cell)
            if found is None:
                reasons.append(f"{subject} {cell} did not run")
            elif not found.usable:
                reasons.append(f"{subject} {cell} flagged: {'; '.join(found.flags)}{self._cross_checks(subject)}")
        return "; ".join(reasons) or "—"

    def _cross_checks(self, subject: str) -> str:
        """What the load tools that are not their own limit measured of a subject (wrk, h2load), if any."""
        record = self.run.subject(subject)
        measured = [
            f"{cell.name} {RPS.fmt(found.summary.median())} {RPS.unit}"
            for cell in (record.cells if record else ())
            if not cell.TOOL.tool_limited_at_ceiling
            and (found := self.figure(subject, cell.name)) is not None
            and found.usable
        ]
        return f" (the cross-checks measured {', '.join(measured)})" if measured else ""
