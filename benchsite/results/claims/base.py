"""What every claim kind shares: its verdict states and badges, the verdict record, and how an interval is read
against a claim's bounds.

A claim holds when its whole interval clears its threshold, does not hold when the whole interval
misses it, and is inconclusive when the interval straddles it; a flagged or missing figure decides
nothing (`figures`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Self, assert_never

from benchsite.records import Name, Record, Text
from benchsite.results.evidence import Evidence
from benchsite.results.intervals import Interval
from benchsite.results.originals import OriginalFigures
from benchsite.results.view import RunView, SubjectCell

if TYPE_CHECKING:
    from benchsite.results.claims import AnyClaim


class State(StrEnum):
    """A verdict's state."""

    HOLDS = "holds"
    DOES_NOT_HOLD = "does not hold"
    DEPENDS = "depends on the machine"  # across machines: holds on some, does not hold on others
    INCONCLUSIVE = "inconclusive"
    TOOL_LIMITED = "limited by the load tool"  # the figures ran, but the load tool, not the server, set them
    TOO_LITTLE = "not enough evidence"  # an estimate from so few rounds that its interval tells nothing
    COULD_NOT_RUN = "could not run"

    def counted(self, number: int) -> str:
        """'1 holds', '4 hold', '4 do not hold': a count of claims in this state, the verb agreeing."""
        plural = {State.HOLDS: "hold", State.DOES_NOT_HOLD: "do not hold", State.DEPENDS: "depend on the machine"}
        return f"{number} {plural.get(self, self.value) if number != 1 else self.value}"

    @property
    def decided_nothing(self) -> bool:
        """A state that says nothing about the claim (the figures it needs are missing or not the server's)."""
        return self in (State.TOOL_LIMITED, State.TOO_LITTLE, State.COULD_NOT_RUN)

    @property
    def css_class(self) -> str:
        """The class that colours it on a page (docs/_static/bench.css has one rule per state)."""
        return f"bench-verdict-{self.value.replace(' ', '-')}"

    @property
    def explained(self) -> str:
        """Its line in the glossary."""
        match self:
            case State.HOLDS:
                return "the whole 95 % interval clears the rule's threshold"
            case State.DOES_NOT_HOLD:
                return "the whole 95 % interval misses the rule's threshold"
            case State.INCONCLUSIVE:
                return "the interval straddles the threshold: the data cannot decide (more rounds or runs may)"
            case State.DEPENDS:
                return "over all machines: it holds on one machine and does not hold on another (both are named)"
            case State.TOOL_LIMITED:
                return "the figures ran, but the load tool's own ceiling, not the server, set them: decides nothing"
            case State.TOO_LITTLE:
                return (
                    "its estimate rests on under three rounds, whose interval spans almost any value: decides nothing"
                )
            case State.COULD_NOT_RUN:
                return "a figure it needs is missing, failed or flagged: decides nothing"
            case _:
                assert_never(self)


# A verdict's badge is read before anything else: it says what happened against the claim, in a reader's words.
# The state stays in the sentence and the claims table: a claim of "at least 2x faster" met by a surely faster
# 1.47x does not hold, and its badge reads WEAKER THAN CLAIMED, never a red verdict on a direction that held.
class Badge(StrEnum):
    """What a verdict's badge says."""

    AS_CLAIMED = "as claimed"
    BEYOND = "beyond the claim"  # surely further along the claimed direction than its upper bound
    AT_LEAST = "at least as claimed"  # as claimed or beyond, not settled which
    WEAKER = "weaker than claimed"  # the claimed direction, surely short of the claimed size
    DIRECTION_ONLY = "direction as claimed"  # the claimed direction, its size not settled against the claim's
    SHORT = "short of the claim"  # which way is not settled, but surely short of the claimed size: the claim fails
    OPPOSITE = "the opposite"  # surely the other way
    NOT_AS_CLAIMED = "not as claimed"  # a claim without a direction (a keep-alive claim, a band around 1) missed
    NOT_SETTLED = "not settled"
    DEPENDS = "depends on the machine"
    TOO_LITTLE = "not enough evidence"
    TOOL_LIMITED = "the load tool's limit"
    NOT_MEASURED = "not measured"

    @property
    def tone(self) -> str:
        """Its colour's name: met (green), short (amber: the direction held), missed (red), open (grey),
        machine (violet)."""
        match self:
            case Badge.AS_CLAIMED | Badge.BEYOND | Badge.AT_LEAST:
                return "met"
            case Badge.WEAKER | Badge.DIRECTION_ONLY:
                return "short"
            case Badge.OPPOSITE | Badge.NOT_AS_CLAIMED | Badge.SHORT:
                return "missed"
            case Badge.DEPENDS:
                return "machine"
            case Badge.NOT_SETTLED | Badge.TOO_LITTLE | Badge.TOOL_LIMITED | Badge.NOT_MEASURED:
                return "open"
            case _:
                assert_never(self)

    @property
    def css_class(self) -> str:
        return f"bench-badge-{self.tone}"

    @property
    def explained(self) -> str:
        """Its line in the glossary."""
        match self:
            case Badge.AS_CLAIMED:
                return "the direction and the size the claim states, surely (the rule holds)"
            case Badge.BEYOND:
                return "the claimed direction, surely more than the largest size claimed"
            case Badge.AT_LEAST:
                return "the claimed direction, at least the claimed size: whether more than claimed is not settled"
            case Badge.WEAKER:
                return "the claimed direction, surely less than the size claimed (the rule does not hold)"
            case Badge.DIRECTION_ONLY:
                return "the claimed direction, surely; whether the size reaches the claim's is not settled"
            case Badge.OPPOSITE:
                return "surely the other way than claimed"
            case Badge.SHORT:
                return (
                    "surely short of the claimed size, whichever way the difference goes (the whole interval lies "
                    "short of it): the claim fails, however many more rounds are run"
                )
            case Badge.NOT_AS_CLAIMED:
                return "a claim without a direction (say, keep-alive honoured) that surely did not happen as claimed"
            case Badge.NOT_SETTLED:
                return "the figures cannot tell which way it goes: more rounds or runs may"
            case Badge.DEPENDS:
                return "as claimed on one machine, not on another (both are named)"
            case Badge.TOO_LITTLE | Badge.TOOL_LIMITED | Badge.NOT_MEASURED:
                states = {Badge.TOO_LITTLE: State.TOO_LITTLE, Badge.TOOL_LIMITED: State.TOOL_LIMITED}
                return State(states.get(self, State.COULD_NOT_RUN)).explained
            case _:
                assert_never(self)

    @classmethod
    def of_state(cls, state: State) -> Badge:
        """The badge a state gives where no estimate says more (a fastest or keep-alive claim)."""
        match state:
            case State.HOLDS:
                return cls.AS_CLAIMED
            case State.DOES_NOT_HOLD:
                return cls.NOT_AS_CLAIMED
            case State.INCONCLUSIVE:
                return cls.NOT_SETTLED
            case State.DEPENDS:
                return cls.DEPENDS
            case State.TOO_LITTLE:
                return cls.TOO_LITTLE
            case State.TOOL_LIMITED:
                return cls.TOOL_LIMITED
            case State.COULD_NOT_RUN:
                return cls.NOT_MEASURED
            case _:
                assert_never(state)


def badge_of(state: State, said: Badge | None) -> Badge:
    """A verdict's badge: what its estimate said, unless its state decided nothing or depends on the machine."""
    if said is None or state.decided_nothing or state == State.DEPENDS:
        return Badge.of_state(state)
    return said


@dataclass(frozen=True)
class Outcome:
    """What a claim kind's decision found on one run."""

    state: State
    today: str  # the deciding value with its interval, or why there is none
    needs: tuple[SubjectCell, ...] = ()  # the cell runs whose further rounds could decide an inconclusive claim
    estimate: Interval | None = None  # the ratio it was decided on, where it is one
    rests_on: tuple[SubjectCell, ...] = ()  # the cell runs that estimate comes from
    details: tuple[str, ...] = ()  # every item a shortened `today` lists only the first few of
    not_compared: str = ""  # "7 of 31 comparisons not made": what a state decided on part of its comparisons left out
    reading: str = ""  # the outcome in a plain sentence: direction and size against the claim's ("": `today` says it)
    said: Badge | None = None  # the badge its estimate gives (None: its state's own)


@dataclass(frozen=True)
class Verdict:
    """A claim's outcome on one run, with what decided it and the published value beside it."""

    claim: AnyClaim
    state: State
    today: str
    published: str
    needs: tuple[SubjectCell, ...] = ()
    estimate: Interval | None = None
    rests_on: tuple[SubjectCell, ...] = ()
    details: tuple[str, ...] = ()
    not_compared: str = ""
    reading: str = ""  # the verdict in a plain sentence (`Outcome.reading`)
    said: Badge | None = None  # the badge its estimate gives (`Outcome.said`; see `badge`)

    @property
    def badge(self) -> Badge:
        """What happened against the claim, in a reader's words."""
        return badge_of(self.state, self.said)


@dataclass(frozen=True)
class MachineEvidence:
    """One machine's runs, as a claim's evidence chart or sentence reads them: its label and its runs."""

    label: str
    views: tuple[RunView, ...]


@dataclass(frozen=True)
class EvidenceRow:
    """One row of a claim's forest plot: an estimate (None: not estimable) of one run, or of a machine's runs."""

    label: str
    estimate: Interval | None
    pooled: bool


@dataclass(frozen=True)
class Forest:
    """What a claim's forest plot draws: its rows, what their estimates are, and the rule's lines."""

    rows: tuple[EvidenceRow, ...]
    what: str  # the estimates in words, with their unit
    thresholds: tuple[float, ...]


class ClaimBase(Record):
    """One conclusion of an original page (or of a page's own), with the rule a run decides it by."""

    id: Name
    text: Text

    @property
    def rule(self) -> str:
        """The rule in words, naming its figures."""
        raise NotImplementedError

    @property
    def threshold(self) -> str:
        """The bound its interval must clear, in words."""
        raise NotImplementedError

    def subjects_named(self) -> set[str]:
        raise NotImplementedError

    def cells_named(self) -> set[str]:
        raise NotImplementedError

    def with_subjects(self, names: dict[str, str], suffix: str) -> Self:
        """The same rule about other subjects (a release sweep's copies): names maps old to new; the id
        gets the suffix so that every copy stays unique."""
        return self.model_copy(update={"id": f"{self.id}-{suffix}", **self._renamed(names)})

    def _renamed(self, names: dict[str, str]) -> dict[str, object]:
        """The kind's subject fields with the names replaced (unnamed subjects stay)."""
        raise NotImplementedError

    def decide(self, view: Evidence) -> Outcome:
        """The verdict one run gives."""
        raise NotImplementedError

    def published_value(self, published: OriginalFigures) -> str:
        """What the original page's own figures say on the rule (its single runs have no interval)."""
        raise NotImplementedError

    def evidence(self, machines: list[MachineEvidence]) -> Forest | str:
        """What its verdicts rest on, machine by machine: a forest plot's rows, or a sentence where the claim
        is not decided on a ratio."""
        raise NotImplementedError

    def round_ratios(self, view: RunView) -> list[float] | None:
        """The per-round ratios of one run that decide it (None: it is not decided on a ratio, or cannot be)."""
        raise NotImplementedError

    def why(self, views: Sequence[RunView]) -> str | None:
        """One sentence on why the figures come out as they do, from what one machine's runs say beyond the
        rule's own figures (the answer card shows it under the claim); None: nothing to say (the default)."""
        return None


def run_label(view: RunView) -> str:
    """A run as a chart's row names it: 2026-11-22 05:40 (its start, UTC)."""
    run_id = view.run.run_id
    return f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]} {run_id[9:11]}:{run_id[11:13]}"


def unusable(view: Evidence, cells: list[SubjectCell]) -> Outcome:
    """The outcome of a claim whose figures cannot decide it: limited by the load tool, not enough evidence (every
    repetition disturbed on a busy machine: the servers answered), or could not run."""
    state = (
        State.TOOL_LIMITED
        if view.tool_limited(cells)
        else State.TOO_LITTLE
        if view.busy_only(cells)
        else State.COULD_NOT_RUN
    )
    return Outcome(state, view.why_not(cells))


def fmt_interval(interval: Interval, digits: int = 2, rounds: bool = True) -> str:
    """1.82 [1.61–2.05] (12 rounds), or (3 runs, 41 rounds) where runs were pooled: the estimate and its
    95 % interval."""
    if not interval.bounded:
        return f"{interval.value:.{digits}f} (no interval: {interval.count} round)"
    runs = f"{interval.runs} runs, " if interval.runs > 1 else ""
    counted = f" ({runs}{interval.count} rounds)" if rounds else ""
    return f"{interval.value:.{digits}f} [{interval.low:.{digits}f}–{interval.high:.{digits}f}]{counted}"


def against(interval: Interval, at_least: float | None, at_most: float | None) -> State:
    """Where an interval lies against a claim's bounds."""
    if not interval.bounded:
        return State.INCONCLUSIVE
    assert interval.low is not None and interval.high is not None
    if (at_least is not None and interval.high < at_least) or (at_most is not None and interval.low > at_most):
        return State.DOES_NOT_HOLD
    if (at_least is None or interval.low >= at_least) and (at_most is None or interval.high <= at_most):
        return State.HOLDS
    return State.INCONCLUSIVE
