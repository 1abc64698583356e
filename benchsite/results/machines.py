"""A recipe's runs machine by machine, and each claim's verdict on every machine and over all of them.

Numbers are never joined across machines: the runs of one machine (one set-up: a two-host run is a
set-up of its own) are pooled into one verdict per claim; across machines, ACROSS_MACHINES_RULE below
says how they combine (and every page says it the same way). A page's main results show its reference
machine (the one its published.toml names, else the machine with the most runs) and of its runs the
best-evidenced one (`best_evidenced`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import assert_never

from benchsite.model.machine import Machine
from benchsite.results.claims import AnyClaim, State, Verdict, decide, fmt_interval
from benchsite.results.claims.base import Badge
from benchsite.results.evidence import Pooled
from benchsite.results.flames import flames_of
from benchsite.results.originals import OriginalFigures
from benchsite.results.view import RunView
from benchsite.results.work import cpu_splits


@dataclass(frozen=True)
class MachineRuns:
    """The runs of one machine in one set-up, oldest first. Where the machine has quiet runs, they are what its
    page reads and its verdicts pool; a run measured on a busy machine is then only listed, labelled, in the
    history. A machine with busy runs alone (a user's own laptop) is read from them: their disturbed repetitions
    are already left out of their figures (each a lower bound, see `CellSummary.at_least_rps`)."""

    machine: Machine
    two_hosts: bool
    every_run: tuple[RunView, ...]

    @classmethod
    def of(cls, machine: Machine, two_hosts: bool, views: list[RunView]) -> MachineRuns:
        return cls(machine, two_hosts, tuple(sorted(views, key=lambda view: view.run.run_id)))

    @property
    def busy(self) -> tuple[RunView, ...]:
        """Its runs measured on a busy machine (labelled wherever they are shown)."""
        return tuple(view for view in self.every_run if view.busy)

    @property
    def only_busy(self) -> bool:
        """Whether every run of it was measured on a busy machine."""
        return len(self.busy) == len(self.every_run)

    @property
    def views(self) -> tuple[RunView, ...]:
        """The runs its page reads and its verdicts pool: the quiet ones, or every run where none was quiet."""
        if self.only_busy:
            return self.every_run
        return tuple(view for view in self.every_run if not view.busy)

    @property
    def main(self) -> RunView:
        """The page's run on this machine: every section of the page reads it (`best_evidenced`)."""
        return best_evidenced(self.views)

    @property
    def label(self) -> str:
        return self.machine.name + (" (two hosts)" if self.two_hosts else "")

    @property
    def key(self) -> str:
        return self.machine.id + ("-two-hosts" if self.two_hosts else "")


def records_kept(view: RunView) -> int:
    """How many kinds of record beside req/s a run kept (newer runs keep more): the kernel's part of the
    servers' CPU, instruction counts, flame graphs, the pre-run check of the machine."""
    run = view.run
    kept = (
        bool(cpu_splits(view, run.cell_names)),
        run.counting is not None and bool(run.counting.counts),
        bool(flames_of(run.path)),
        run.machine_check is not None,
    )
    return sum(kept)


def best_evidenced(views: Sequence[RunView]) -> RunView:
    """Of one machine's runs, the one its page reads in every section: the most sections measured (latency,
    memory: a run that fills every section of the page, so that none reads another run), then the most usable
    figures, then the least noise (the median CV of req/s over its cells: the quality of its evidence, which more
    rounds forced by a noisy host do not improve), then the most kinds of record, then the latest. A noisier run
    is pooled with its weight into the verdicts, and listed, but does not displace a steadier one from the page's
    tables."""
    return max(enumerate(views), key=_evidence)[1]


def measured(view: RunView, section: str) -> bool:
    """Whether the run measured a section beside req/s: "latency" (at given loads) or "memory"."""
    run = view.run
    if section == "latency":
        return run.latency is not None and bool(run.latency.subjects)
    return any(subject.idle_memory is not None for subject in run.subjects)


def sections_measured(view: RunView) -> int:
    """How many of the sections beside req/s the run measured: latency at given loads, memory."""
    return measured(view, "latency") + measured(view, "memory")


def _evidence(indexed: tuple[int, RunView]) -> tuple[int, int, float, int, int]:
    index, view = indexed
    noise = view.noise_percent
    return (
        sections_measured(view),
        view.usable_count,
        -(noise if noise is not None else math.inf),
        records_kept(view),
        index,
    )


# What each step of `best_evidenced` looks at, as the runs list says which one picked the page's run.
EVIDENCE_STEPS = (
    "the most sections measured (latency, memory)",
    "the most usable figures",
    "the least noise",
    "the most kinds of record",
    "the latest",
)


def picked_by(views: Sequence[RunView]) -> str:
    """Which step of `best_evidenced` picked the page's run over the runner-up ("" with one run alone)."""
    ranked = sorted(enumerate(views), key=_evidence, reverse=True)
    if len(ranked) < 2:
        return ""
    best, second = _evidence(ranked[0]), _evidence(ranked[1])
    step = next(i for i, (a, b) in enumerate(zip(best, second, strict=True)) if a != b)
    return EVIDENCE_STEPS[step]


def by_machine(views: list[RunView], reference: str | None = None) -> list[MachineRuns]:
    """The runs grouped by machine and set-up: the reference machine first (named or id'd by `reference`,
    else the one with the most runs), the others by their number of runs."""
    groups: dict[tuple[str, bool], list[RunView]] = {}
    machines: dict[str, Machine] = {}
    for view in sorted(views, key=lambda v: v.run.run_id):
        machine = view.run.machine
        machines.setdefault(machine.id, machine)  # one machine, one name: its oldest run's
        groups.setdefault((machine.id, view.run.topology is not None), []).append(view)
    found = [MachineRuns.of(machines[key[0]], key[1], group) for key, group in groups.items()]

    def rank(group: MachineRuns) -> tuple[bool, bool, int, str]:
        named = reference in (group.machine.name, group.machine.id)
        return (not named, group.two_hosts, -len(group.views), group.views[-1].run.run_id)

    return sorted(found, key=rank)


@dataclass(frozen=True)
class MachineVerdict:
    """A claim's verdict on one machine, from all of its runs."""

    runs: MachineRuns
    verdict: Verdict

    @property
    def too_little_evidence(self) -> bool:
        """Its state is "not enough evidence" (`weighed`)."""
        return self.verdict.state == State.TOO_LITTLE


def weighed(verdict: Verdict) -> Verdict:
    """A verdict whose estimate rests on fewer than MIN_EVIDENCE_ROUNDS rounds decides nothing, whichever side of
    the threshold it lies: a t interval of one degree of freedom spans almost any value (4.51 [0.02-1196.92]
    from 2 rounds), so its state is "not enough evidence", its estimate and reading kept."""
    estimate = verdict.estimate
    if estimate is None or estimate.count >= MIN_EVIDENCE_ROUNDS or verdict.state.decided_nothing:
        return verdict
    reading = (
        f"only {estimate.count} round{'s' * (estimate.count != 1)} measured it, too few to decide anything "
        f"(its estimate: {fmt_interval(estimate, rounds=False)})."
    )
    return replace(verdict, state=State.TOO_LITTLE, reading=reading)


@dataclass(frozen=True)
class ClaimAcross:
    """A claim's verdict on every machine, and over all of them."""

    claim: AnyClaim
    published: str
    machines: tuple[MachineVerdict, ...]

    @property
    def state(self) -> State:
        """Over the machines that count (ACROSS_MACHINES_RULE): one with too little evidence left out where
        another machine decided the claim."""
        return overall(m.verdict.state for m in self.counted)

    @property
    def counted(self) -> tuple[MachineVerdict, ...]:
        """The machines whose verdicts make the claim's state over all of them: those that measured it with
        enough evidence (else every machine, whose states then say why none did)."""
        measured = tuple(m for m in self.machines if not m.verdict.state.decided_nothing)
        return measured or self.machines

    @property
    def deciding(self) -> tuple[MachineVerdict, ...]:
        """The machines whose verdicts make its state over all of them: those that decided it (held or did not
        hold), or, where it is inconclusive, those still inconclusive; where none measured it with enough
        evidence, those whose state says so."""
        state = self.state
        if state.decided_nothing:
            return tuple(m for m in self.counted if m.verdict.state == state)
        wanted = (State.INCONCLUSIVE, State.DEPENDS) if state == State.INCONCLUSIVE else DECIDED
        return tuple(m for m in self.counted if m.verdict.state in wanted)

    @property
    def badge(self) -> Badge:
        """What happened against the claim over all machines (BADGE_ACROSS_RULE): the badge every machine that
        measured it shares; where their words differ, the one that grants the claim least, so that no machine's
        evidence is said stronger than it is; "depends on the machine" where one holds and another does not."""
        state = self.state
        badges = {m.verdict.badge for m in self.counted}
        if state.decided_nothing or state == State.DEPENDS or not badges:
            return Badge.of_state(state)
        return max(badges, key=GRANTS.index)

    @property
    def not_compared(self) -> str:
        """What the machines that made its state left out of their comparisons ("" where nothing)."""
        said = [f"{m.runs.label}: {m.verdict.not_compared}" for m in self.counted if m.verdict.not_compared]
        if len(said) == 1 and len(self.counted) == 1:
            return self.counted[0].verdict.not_compared
        return "; ".join(said)

    @property
    def depends_on(self) -> str:
        """Where it holds and where it does not, for a claim that depends on the machine."""
        holds = [m.runs.label for m in self.machines if m.verdict.state == State.HOLDS]
        fails = [m.runs.label for m in self.machines if m.verdict.state == State.DOES_NOT_HOLD]
        return f"holds on {', '.join(holds)}; does not hold on {', '.join(fails)}"


# Badges from the one that grants a claim most to the one that grants it least (`ClaimAcross.badge`).
GRANTS = (
    Badge.BEYOND,
    Badge.AS_CLAIMED,
    Badge.AT_LEAST,
    Badge.DIRECTION_ONLY,
    Badge.NOT_SETTLED,
    Badge.WEAKER,
    Badge.SHORT,
    Badge.NOT_AS_CLAIMED,
    Badge.OPPOSITE,
)
BADGE_ACROSS_RULE = (
    "A claim's badge over all machines is the badge each machine that measured it gives, where they agree; where "
    "they differ, the one that grants the claim least (say, *weaker than claimed* beside another machine's "
    "*direction as claimed*), each machine's own badge on its line below it; *depends on the machine* where the "
    "claim holds on one machine and does not hold on another."
)
MIN_EVIDENCE_ROUNDS = 3  # a machine's estimate from fewer rounds carries too little evidence to decide anything
DECIDED = (State.HOLDS, State.DOES_NOT_HOLD)

# How one machine decides a claim (`ClaimBase.decide`, `weighed`), as the methodology page states it.
ON_A_MACHINE_RULE = (
    'Each conclusion is a rule with a threshold (say, "raw ÷ framework ≥ 1.5"), decided on each machine from '
    "all of that machine's runs pooled (a random-effects model, so that the interval carries the spread between "
    "runs as well as the noise within each). It *holds* on a machine when the whole 95 % interval clears the "
    "threshold, *does not hold* when the whole interval misses it, and is *inconclusive* when the interval "
    "straddles it: the data cannot decide, and the page says so. Three states decide nothing: *limited by the "
    "load tool* (the load tool, not the server, set a figure it needs), *could not run* (a figure it needs failed, "
    "was flagged or is missing) and *not enough evidence* (its estimate rests on fewer than three rounds, whose "
    "interval spans almost any value). A *fastest* claim holds when the subject is surely ahead of every "
    "competitor in every cell; competitors whose figures are flagged are not compared, and its state then says "
    "how many comparisons it was decided without (*holds where compared*)."
)

# What each verdict line says beside its state (`claims.reading`), as the methodology page states it.
READING_RULE = (
    'Beside each state, a sentence says in words what was measured: which way the ratio goes ("surely faster", '
    '"surely slower", or "not settled" where the interval spans both), its size as a factor with its 95 % '
    'interval ("surely faster: 1.53× (95 %: 1.45× to 1.61×)"), whether that is the claimed direction, and where the '
    "size stands against the claimed size: *less than claimed*, *as claimed*, *more than claimed*, or *not settled* "
    '("as claimed or more" where the interval reaches past only one end of the claimed range).'
)

# The rule `overall` applies, as every page states it (reStructuredText: *emphasis* marks the states).
ACROSS_MACHINES_RULE = (
    "Over all machines a claim *holds* when it holds on every machine that measured it, *does not hold* when it "
    "does not hold on every one of them, *depends on the machine* when it holds on one and does not hold on "
    "another, and is *inconclusive* when any of them is inconclusive and no two of them disagree; a machine where "
    "it could not run, where the load tool set the figure, or whose estimate rests on fewer than three rounds "
    "(*not enough evidence*) does not count, and a claim with nothing else says so."
)


def overall(states: Iterable[State]) -> State:
    """Over machines, as ACROSS_MACHINES_RULE says; where no machine measured it, limited by the load tool
    (if that is why on some machine) or could not run. Every state is placed: a new one must be here."""
    holds = fails = undecided = tool_limited = thin = False
    for state in states:
        match state:
            case State.HOLDS:
                holds = True
            case State.DOES_NOT_HOLD:
                fails = True
            case State.INCONCLUSIVE | State.DEPENDS:
                undecided = True
            case State.TOOL_LIMITED:
                tool_limited = True
            case State.TOO_LITTLE:
                thin = True
            case State.COULD_NOT_RUN:
                pass  # does not count
            case _:
                assert_never(state)
    if holds and fails:
        return State.DEPENDS
    if undecided:
        return State.INCONCLUSIVE
    if holds or fails:
        return State.HOLDS if holds else State.DOES_NOT_HOLD
    return State.TOO_LITTLE if thin else State.TOOL_LIMITED if tool_limited else State.COULD_NOT_RUN


def across_machines(
    groups: list[MachineRuns], claims: tuple[AnyClaim, ...], published: OriginalFigures
) -> list[ClaimAcross]:
    """Every claim decided on each machine's pooled runs."""
    pooled = [(group, Pooled(group.views)) for group in groups]
    found = []
    for claim in claims:
        per_machine = tuple(
            MachineVerdict(group, weighed(decide(claim, evidence, published))) for group, evidence in pooled
        )
        found.append(ClaimAcross(claim, claim.published_value(published), per_machine))
    return found
