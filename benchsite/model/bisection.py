"""A bisection's record (`invoke bisect`): data/experiments/bisect/RECIPE/FOLDER/bisect.json, its state after
every step and its outcome, which the releases page tells."""

from __future__ import annotations

from typing import Literal

from benchsite.model.variant import SourceCommit
from benchsite.records import Name, Record, Seq, Text

STATE_FILE = "bisect.json"
Verdict = Literal["bad", "good", "undecided", "does not build", "failed"]


class Step(Record):
    """One measured commit: against which, what it was called, and where its run is (under the bisection's
    folder)."""

    commit: SourceCommit
    against: Text  # the commit it was measured against (full id)
    verdict: Verdict
    said: Text  # the cells' outcome in a few words
    run: str  # its run folder, relative to the bisection's folder ("" where it did not build)
    seconds: float


class Bisection(Record):
    """A bisection's state and its outcome: data/experiments/bisect/<recipe>/<package>-<good>-<bad>/bisect.json."""

    recipe: Name
    package: Text
    repository: Text  # as shown: a URL, or a local folder's name
    good: SourceCommit
    bad: SourceCommit
    candidates: int  # commits between them, as git counts them (reachable from bad, not from good)
    subjects: Seq[str]
    cells: Seq[str]
    profile: Text
    signature: dict[str, float]  # "subject cell" -> bad's B ÷ A there, where the confirming A/B called a change
    in_work: bool  # the signature is in work (instructions), time not deciding
    confirm: Text  # the confirming run (good against bad), relative
    steps: Seq[Step] = ()
    first_bad: SourceCommit | None = None
    parent: SourceCommit | None = None
    last: str = ""  # the A/B between the first bad commit and its parent, relative
    touched: Seq[str] = ()  # the files the first bad commit touched
    remaining: Seq[str] = ()  # where skips leave more than one: the commits the first bad one is among
    wall_s: float = 0.0
