"""What the interference rule does, recomputed from runs: each run's verdicts with the rule (as stored) and
without it (every repetition counted, disturbed or not), against the quiet runs' pooled verdicts, and what
`invoke compare` says of each quiet/hogged pair either way."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from benchsite.model.run import RunDocument
from benchsite.results.claims import State, Verdict, decide
from benchsite.results.compare import compare_runs, run_drift
from benchsite.results.evidence import Pooled
from benchsite.results.intervals import half_width
from benchsite.results.published import Published
from benchsite.results.view import RunView

OPPOSITE = {State.HOLDS: State.DOES_NOT_HOLD, State.DOES_NOT_HOLD: State.HOLDS}


def ignoring_rule(run: RunDocument) -> RunView:
    """The run as if nothing had been marked disturbed: every repetition that worked counts."""
    data = run.to_json()
    for subject in data["subjects"]:
        for cell in subject["cells"]:
            for rep in cell["repetitions"]:
                rep["disturbed"] = False
    return RunView(RunDocument.from_json(data, run.run_id).stored_at(run.path))


@dataclass(frozen=True)
class RuleOnRun:
    """One run's verdicts with the rule and without it."""

    view: RunView
    with_rule: list[Verdict]
    without_rule: list[Verdict]


@dataclass(frozen=True)
class HogExperiment:
    """Quiet runs and hogged runs of one recipe, every claim decided with the rule and without it."""

    reference: list[Verdict]  # the quiet runs pooled, with the rule
    quiet: list[RuleOnRun]
    hogged: list[RuleOnRun]

    def opposite(self, runs: list[RuleOnRun], with_rule: bool) -> int:
        """How many (run, claim) verdicts were decided the other way from the quiet runs pooled."""
        return sum(
            verdict.state == OPPOSITE.get(reference.state)
            for run in runs
            for reference, verdict in zip(self.reference, run.with_rule if with_rule else run.without_rule, strict=True)
        )

    def median_half_width(self, runs: list[RuleOnRun], with_rule: bool) -> float | None:
        """The median relative half-width of the claims' intervals over these runs (0.05: ±5 %)."""
        widths = [
            width
            for run in runs
            for verdict in (run.with_rule if with_rule else run.without_rule)
            if verdict.estimate is not None and (width := half_width(verdict.estimate)) is not None
        ]
        return statistics.median(widths) if widths else None

    def pairs_flagged(self, with_rule: bool) -> tuple[int, int]:
        """Of the quiet/hogged pairs (the same code, minutes apart), how many `invoke compare` calls changed
        in at least one cell; and how many pairs there are."""
        flagged = 0
        drift = run_drift([run.view for run in self.quiet])  # the machine's quiet runs, as `invoke compare` would
        for quiet, hogged in zip(self.quiet, self.hogged, strict=False):
            a = quiet.view if with_rule else ignoring_rule(quiet.view.run)
            b = hogged.view if with_rule else ignoring_rule(hogged.view.run)
            flagged += any(change.changed for change in compare_runs(a, b, drift))
        return flagged, min(len(self.quiet), len(self.hogged))


def hog_experiment(quiet: list[RunDocument], hogged: list[RunDocument], published: Published) -> HogExperiment:
    def on(run: RunDocument) -> RuleOnRun:
        return RuleOnRun(RunView(run), published.verdicts(RunView(run)), published.verdicts(ignoring_rule(run)))

    quiet_views = [RunView(run) for run in quiet]
    reference = [decide(claim, Pooled(quiet_views), published) for claim in published.claims]
    return HogExperiment(reference, [on(run) for run in quiet], [on(run) for run in hogged])
