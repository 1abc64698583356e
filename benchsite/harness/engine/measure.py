"""Measuring: warm-ups, then rounds of every (subject, cell), each repetition one bounded load run with
the CPU time it cost on each side and what else the machine did meanwhile; further rounds for the
cells of claims still undecided (a sequential run: of comparisons still undecided), within the profile's limits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from benchsite.harness.processes.signals import checkpoint
from benchsite.harness.session.budget import BUDGET_HINT, RoundClock, after_rounds_s, budget_said, reserve_s
from benchsite.harness.session.context import Plan, RunContext
from benchsite.harness.session.load_argv import cell_argv, repetition_argv
from benchsite.harness.session.repetition import measure
from benchsite.model.recipe import AnySubject, Ceiling, Server
from benchsite.model.run import Rounds, RunDocument, Warmup
from benchsite.results.claims import Verdict
from benchsite.results.deciding import looked
from benchsite.results.intervals import half_width
from benchsite.results.published import Published
from benchsite.results.view import RunView
from benchsite.tools import AnyCell, external_load


def warm_up(context: RunContext) -> list[Warmup]:
    """One discarded run of each warm-up cell (default: every cell bounded by a request count) per subject;
    argv and exit code kept."""
    profile, settings, hosts = context.profile, context.settings, context.hosts
    records: list[Warmup] = []
    if profile.warmup_requests <= 0:
        return records
    for subject, cells in context.plan:
        if not isinstance(subject, Server | Ceiling):  # a client under test warms up inside its own run
            continue
        server = context.started[subject.name].server
        for each in cells:
            cell = external_load(each)
            if cell is None or not cell.counted:
                continue
            if profile.warmup_cells and cell.name not in profile.warmup_cells:
                continue
            context.reporter.status(f"warming up {subject.label}, {cell.label}")
            argv = cell_argv(
                server,
                subject,
                cell,
                requests=profile.warmup_requests,
                settings=settings,
                address=context.address,
                seconds=profile.seconds,
            )
            run = hosts.load.run_tool(argv, settings.load_cpu, settings.cell_timeout_s)
            records.append(Warmup(subject=subject.name, cell=cell.name, argv=tuple(argv), exit_code=run.exit_code))
    return records


@dataclass
class Measuring:
    """The measured rounds of one run: every cell once a round for `rounds` rounds, then further ones where needed."""

    context: RunContext
    rounds_made: int = 0
    further_repetitions: int = 0
    counted: tuple[str, ...] = ()  # the servers measured after the timed rounds (latency, flames, counting)
    clock: RoundClock = field(default_factory=RoundClock)
    before_round: Callable[[int], None] | None = None  # what a round needs first (a new start of the servers)

    def round(self, index: int, plan: Plan) -> None:
        """One round of the plan's cells. By default cell by cell: the subjects of a cell back to back, so
        the figures a claim compares are measured seconds apart, their order turning round every other
        round (A B, then B A)."""
        began = time.monotonic()
        if self.before_round is not None:
            self.before_round(index)
        context = self.context
        subjects = [subject for subject, _ in plan]
        if index % 2 == 0:
            subjects.reverse()
        for subject, cell in self._order(plan, subjects):
            checkpoint()  # an interrupt swallowed anywhere stops the run here
            server, argv = repetition_argv(context, subject, cell)
            rep = measure(context, server, cell, argv, subject=subject.name, index=index)
            context.measured.setdefault((subject.name, cell.name), []).append(rep)
            outcome = f"{rep.result.requests_per_s:,.0f} req/s" if rep.result else f"FAILED: {rep.error}"
            if rep.disturbed:
                again = (
                    "measured again later"
                    if context.profile.max_rounds
                    else "not counted: this profile makes no further rounds"
                )
                outcome += f" (disturbed: others took {rep.interference_s:.2f} s of CPU; {again})"
            context.reporter.step(f"{subject.label} {cell.label} round {index}: {outcome}")
        self.rounds_made = index
        self.clock.took_s[index] = time.monotonic() - began

    def _order(self, plan: Plan, subjects: list[AnySubject]) -> list[tuple[AnySubject, AnyCell]]:
        """The (subject, cell) pairs of a round in the order the settings ask for."""
        if self.context.settings.interleave == "subject":
            return [(subject, cell) for subject, cells in plan for cell in cells]
        cells_of = {subject.name: cells for subject, cells in plan}
        every_cell = dict.fromkeys(cell for _, cells in plan for cell in cells)
        return [(subject, cell) for cell in every_cell for subject in subjects if cell in cells_of[subject.name]]

    def further_rounds(self, published: Published | None, document: Callable[[], RunDocument]) -> Rounds:
        """Further rounds while the profile's limits allow, of the cells its further rounds are steered by: the
        page's claims still inconclusive (or wider than the precision target) and the rounds others disturbed, or
        (a sequential profile) the copies' cells whose comparisons are undecided, looked at after every round."""
        steered = self._by_comparisons if self.context.profile.further_rounds_by == "comparisons" else self._by_claims
        while True:
            view = RunView(document())
            needed, nothing_left = steered(view, published)
            self._say_budget()
            stopped = self._why_stop(needed, nothing_left)
            if stopped:  # the claims are judged as they stand
                return self._rounds(stopped, published.verdicts(view) if published is not None else [])
            plan = [
                (subject, [cell for cell in cells if (subject.name, cell.name) in needed])
                for subject, cells in self.context.plan
            ]
            plan = [(subject, cells) for subject, cells in plan if cells]
            done = sum(len(reps) for reps in self.context.measured.values())
            self.context.reporter.begin(done + sum(len(cells) for _, cells in plan))
            self.round(self.rounds_made + 1, plan)
            self.further_repetitions += sum(len(cells) for _, cells in plan)

    def _by_comparisons(self, view: RunView, published: Published | None) -> tuple[set[tuple[str, str]], str]:
        """The copies' cells of every comparison still undecided (a decided cell is done, disturbed or not: its
        interval counted that), and why none is left where none is."""
        state = looked(view)
        self.context.reporter.step(f"after round {self.rounds_made}: {state.said()}")
        return state.to_measure, "every comparison decided"

    def _by_claims(self, view: RunView, published: Published | None) -> tuple[set[tuple[str, str]], str]:
        """The cells of the claims still inconclusive (or wider than the target) and of the rounds others
        disturbed, and why none is left where none is."""
        verdicts = published.verdicts(view) if published is not None else []
        needed = {cell for verdict in verdicts for cell in self._needs(verdict)} | self._disturbed_cells()
        profile = self.context.profile
        target = f" or wider than ±{100 * profile.target_half_width:g} %" if profile.target_half_width else ""
        decided = f"no claim left undecided{target}" if published is not None else "no published claims to decide"
        return needed, f"{decided} and no disturbed round to measure again"

    def _say_budget(self) -> None:
        """Once the profile's rounds are made: how the time budget stands for further ones."""
        profile = self.context.profile
        if self.rounds_made == profile.rounds and profile.max_rounds and profile.time_budget_s:
            every_cell = self.clock.estimate_s(self.context.measured, self.context.measured)
            elapsed = time.monotonic() - self.context.run_started
            self.context.reporter.step(budget_said(profile.time_budget_s, elapsed, self.reserve_s, every_cell))

    def _rounds(self, stopped: str, verdicts: list[Verdict]) -> Rounds:
        """How the rounds ended, and where each claim stood then."""
        profile = self.context.profile
        return Rounds(
            minimum=profile.rounds,
            maximum=profile.max_rounds,
            time_budget_s=profile.time_budget_s,
            made=self.rounds_made,
            further_repetitions=self.further_repetitions,
            stopped=stopped,
            elapsed_s=round(time.monotonic() - self.context.run_started, 1),
            claims={verdict.claim.id: self._stood(verdict, stopped) for verdict in verdicts},
        )

    def _disturbed_cells(self) -> set[tuple[str, str]]:
        """Every (subject, cell) of the cells with fewer undisturbed rounds than the profile's repetitions: a
        round in which others took the CPUs is measured again, every subject of its cell side by side."""
        rounds: dict[str, set[int]] = {}
        disturbed: dict[str, set[int]] = {}
        for (_, cell), reps in self.context.measured.items():
            rounds.setdefault(cell, set()).update(rep.index for rep in reps)
            disturbed.setdefault(cell, set()).update(rep.index for rep in reps if rep.disturbed)
        short = {cell for cell, made in rounds.items() if len(made - disturbed[cell]) < self.context.profile.rounds}
        return {key for key in self.context.measured if key[1] in short}

    def _needs(self, verdict: Verdict) -> tuple[tuple[str, str], ...]:
        """The cells further rounds should measure for a claim: an inconclusive one's, or those of an
        estimate wider than the precision target."""
        target = self.context.profile.target_half_width
        width = half_width(verdict.estimate) if verdict.estimate is not None else None
        if target and width is not None and width > target:
            return verdict.needs + verdict.rests_on
        return verdict.needs

    def _stood(self, verdict: Verdict, stopped: str) -> str:
        """Where a claim stood when the rounds stopped: its state, its interval's width, and why no more."""
        width = half_width(verdict.estimate) if verdict.estimate is not None else None
        said = verdict.state.value + ("" if width is None else f", ±{100 * width:.1f} %")
        target = self.context.profile.target_half_width
        if self._needs(verdict):
            return f"{said}: {stopped}"
        if target and width is not None:
            return f"{said}: within the target ±{100 * target:g} %"
        return said

    def _why_stop(self, needed: set[tuple[str, str]], nothing_left: str) -> str:
        """Why no further round is made now ("" where one is): `nothing_left` where nothing is needed."""
        profile = self.context.profile
        if not profile.max_rounds:
            return "this profile makes no further rounds"
        if not needed:
            return nothing_left
        if self.rounds_made >= profile.max_rounds:
            return f"max_rounds ({profile.max_rounds}) reached"
        elapsed = time.monotonic() - self.context.run_started
        after = self.reserve_s
        if elapsed + self.clock.estimate_s(needed, self.context.measured) > profile.time_budget_s - after:
            kept = f", about {after:.0f} s of it for what follows the rounds" if after else ""
            return (
                f"the time budget ({profile.time_budget_s:g} s{kept}) would be overrun by another round ({BUDGET_HINT})"
            )
        return ""

    @property
    def reserve_s(self) -> float:
        """What the rounds keep for what follows them (latency, flame graphs, counting): its estimate from the pace
        they saw, at most a share of the budget (what follows then fits what is left)."""
        after = after_rounds_s(self.context.recipe, self.context.profile, self.counted, self.context.measured)
        return reserve_s(after, self.context.profile.time_budget_s)
