"""`invoke bisect`: which commit of a package made a recipe's subjects slower (or faster)? Down a package's own
git history with the sequential A/B run: first confirm that `bad` differs from `good` here, then measure the
commit git's own bisection picks (`git rev-list --bisect-all`) against `good`, call it bad (it changed as `bad`
did, in a cell where `bad` changed), good (no change beyond the profile's smallest change there) or undecided
(measured once more, then skipped, as `git bisect skip` does; so is a commit that does not build), until one
commit is left: the first bad one, then an A/B between it and its parent. Every step is a kept run; the state is
kept after each (bisect.json), so an interrupted bisection goes on where it stopped."""

from __future__ import annotations

import math
import shutil
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchsite.commands.kinds import SidesRuns
from benchsite.commands.recipe import Asked, Where, session
from benchsite.commands.terminal import say
from benchsite.errors import BenchError
from benchsite.harness.engine.runner import RunChoices
from benchsite.harness.variants.sources import BuildError, commit, repository
from benchsite.model.bisection import STATE_FILE, Bisection, Step, Verdict
from benchsite.model.recipe import load_recipe
from benchsite.model.variant import Source, SourceCommit, canonical
from benchsite.records import read_json
from benchsite.results.change_words import fmt_level
from benchsite.results.comparing import PairedCell, paired_cells
from benchsite.results.intervals import Interval
from benchsite.results.store import list_runs, load_run, write_json
from benchsite.results.view import RunView

BISECT_DIR = Path("experiments") / "bisect"  # under data/: one folder per bisection
TRIES = 2  # an undecided commit is measured this many times, then skipped


@dataclass(frozen=True)
class Asking:
    """What `invoke bisect` was asked."""

    recipe: str
    package: str
    good: str
    bad: str
    repo: str
    subjects: tuple[str, ...]
    cells: tuple[str, ...]
    profile: str
    budget_s: int = 0
    last_profile: str = ""  # the A/B between the first bad commit and its parent: one that counts instructions

    @classmethod
    def given(
        cls, recipe: str, package: str, revisions: tuple[str, str], repo: str, *, lists: tuple[str, str], **rest: Any
    ) -> Asking:
        """From the command line: good and bad, the subjects and cells comma-separated."""
        subjects, cells = (tuple(s.strip() for s in given.split(",") if s.strip()) for given in lists)
        good, bad = revisions
        return cls(
            recipe=recipe, package=package, good=good, bad=bad, repo=repo, subjects=subjects, cells=cells, **rest
        )


def bisect(asking: Asking, where: Where) -> Path:
    """Bisect, resuming a kept state; returns the bisection's folder."""
    started = time.monotonic()
    source = Source(asking.package, "git", asking.repo, asking.good)
    repo = repository(source)
    shown = asking.repo if source.is_url else Path(asking.repo).name
    good, bad = commit(repo, asking.good, shown), commit(repo, asking.bad, shown)
    candidates = _git(repo, ["rev-list", bad.id, "--not", good.id]).split()
    if not candidates:
        raise BenchError(f"{asking.bad} is not a descendant of {asking.good}: give --good an older revision")
    folder = where.target / asking.recipe / f"{canonical(asking.package)}-{good.id[:10]}-{bad.id[:10]}"
    state = _kept(folder, asking, good, bad)
    measure = _Measure(asking, where, repo, folder)
    if state is None:
        say(f"bisect: {len(candidates)} commits from {good.id[:10]} to {bad.id[:10]}; first, does {asking.bad} differ?")
        run = measure.pair(good, bad, "confirm", asking.profile)
        cells = paired_cells(RunView(load_run(folder / run)))
        signature, in_work = _signature(cells)
        if not signature:
            raise BenchError(
                f"{asking.bad} does not differ from {asking.good} in {_cells_said(cells)} (run {run}): nothing to "
                "bisect here; measure other cells, or a larger budget"
            )
        state = Bisection(
            recipe=asking.recipe, package=asking.package, repository=shown, good=good, bad=bad,
            candidates=len(candidates), subjects=asking.subjects, cells=asking.cells, profile=asking.profile,
            signature=signature, in_work=in_work, confirm=run,
        )  # fmt: skip
        _keep(folder, state)
    state = _bisected(state, measure, repo)
    if state.first_bad is not None and not state.last:
        parent = state.parent or state.good
        say(f"bisect: {state.first_bad.id[:10]} is the first bad commit; an A/B against its parent {parent.id[:10]}")
        # in every cell of its profile: its counting plan's cells too (work), which the steps may leave out
        last = measure.pair(parent, state.first_bad, "first-bad", asking.last_profile or asking.profile, cells=())
        state = state.model_copy(update={"last": last})
    state = state.model_copy(update={"wall_s": round(state.wall_s + time.monotonic() - started, 1)})
    _keep(folder, state)
    say(_ended_said(state))
    return folder


def _bisected(state: Bisection, measure: _Measure, repo: Path) -> Bisection:
    """The steps, from where the kept state stands, to one commit left (or all left skipped)."""
    while state.first_bad is None:
        goods = [state.good.id, *(s.commit.id for s in state.steps if s.verdict == "good")]
        # each commit measured is one bad descends from: the last called bad is the bad one now (as in git bisect)
        bad = next((s.commit.id for s in reversed(state.steps) if s.verdict == "bad"), state.bad.id)
        skipped = {s.commit.id for s in state.steps if s.verdict in ("does not build", "failed")}
        tried: dict[str, int] = {}
        for s in state.steps:
            if s.verdict == "undecided":
                tried[s.commit.id] = tried.get(s.commit.id, 0) + 1
        skipped |= {c for c, n in tried.items() if n >= TRIES}
        left = _git(repo, ["rev-list", "--bisect-all", bad, "--not", *goods]).split("\n")
        order = [line.split()[0] for line in left if line.strip()]
        open_ = [c for c in order if c != bad and c not in skipped]
        if not open_:
            remaining = [c for c in order if c != bad]
            first = commit(repo, bad, state.repository)
            parent_id = _git(repo, ["rev-parse", f"{bad}^"]).strip()
            touched = _git(repo, ["show", "--name-only", "--format=", bad]).split()
            update = {"first_bad": first, "parent": commit(repo, parent_id, state.repository), "touched": touched}
            if remaining:
                update["remaining"] = tuple([*remaining, bad])
            return state.model_copy(update=update)
        pick = commit(repo, open_[0], state.repository)
        steps_left = len(order).bit_length()
        say(f"bisect: {len(order)} commits left (about {steps_left} steps); measuring {pick.id[:10]} {pick.subject!r}")
        step = measure.step(state, pick)
        state = state.model_copy(update={"steps": (*state.steps, step)})
        _keep(measure.folder, state)
        say(f"bisect: {pick.id[:10]}: {step.verdict} ({step.said})")
    return state


class NoRunError(BenchError):
    """An A/B run of two commits ended without a run to read (a side's server did not start or answer)."""


class _Measure:
    """The bisection's A/B runs, each in a folder of its own under the bisection's."""

    def __init__(self, asking: Asking, where: Where, repo: Path, folder: Path) -> None:
        self.asking, self.where, self.repo, self.folder = asking, where, repo, folder

    def side(self, found: SourceCommit) -> str:
        return f"{self.asking.package}@git:{self.asking.repo}#{found.id}"

    def pair(
        self, a: SourceCommit, b: SourceCommit, name: str, profile: str, cells: tuple[str, ...] | None = None
    ) -> str:
        """Run A/B between two commits into folder/name/ (emptied first), in the cells asked (None) or those
        given (empty: the profile's): the run's folder, relative."""
        target = self.folder / name
        shutil.rmtree(target, ignore_errors=True)
        chosen = self.asking.cells if cells is None else cells
        kind = SidesRuns((self.side(a), self.side(b)), self.asking.subjects, cells=chosen)
        asked = Asked(
            name=self.asking.recipe, profile=profile, clean=False, hosts="", machine="", keep_going=True,
            choices=RunChoices(budget_s=self.asking.budget_s), kind=kind,
        )  # fmt: skip
        where = replace(self.where, target=target)
        session(asked, where)
        runs = list_runs(target / self.asking.recipe)
        if not runs:
            raise NoRunError(f"the A/B run of {a.id[:10]} against {b.id[:10]} left no run: see its output above")
        return str(runs[-1].relative_to(self.folder))

    def step(self, state: Bisection, pick: SourceCommit) -> Step:
        """Measure one commit against good and call it."""
        began = time.monotonic()
        name = f"step-{len(state.steps) + 1:02d}-{pick.id[:10]}"
        try:
            run = self.pair(state.good, pick, name, self.asking.profile)
        except BuildError as error:
            return Step(commit=pick, against=state.good.id, verdict="does not build", said=str(error), run="",
                        seconds=round(time.monotonic() - began, 1))  # fmt: skip
        except NoRunError as error:  # its server did not start or answer: skipped, as git bisect skips
            return Step(commit=pick, against=state.good.id, verdict="failed", said=str(error), run="",
                        seconds=round(time.monotonic() - began, 1))  # fmt: skip
        cells = paired_cells(RunView(load_run(self.folder / run)))
        verdict, said = called(cells, state.signature, state.in_work)
        return Step(commit=pick, against=state.good.id, verdict=verdict, said=said, run=run,
                    seconds=round(time.monotonic() - began, 1))  # fmt: skip


def _signature(cells: list[PairedCell]) -> tuple[dict[str, float], bool]:
    """Where bad changed from good, and its B ÷ A there: in time where time called it, else in work."""
    timed = {f"{c.subject} {c.cell}": c.time.value for c in cells if c.time is not None and c.time_changed}
    if timed:
        return timed, False
    worked = {f"{c.subject} {c.cell}": c.work.value for c in cells if c.work is not None and c.work_changed}
    return worked, True


def called(cells: list[PairedCell], signature: dict[str, float], in_work: bool) -> tuple[Verdict, str]:
    """A commit's verdict from its A/B against good, in each cell bad changed in: its B ÷ A against halfway (on a
    log scale) from no change to bad's B ÷ A there. Bad where, in any such cell, its interval lies wholly beyond
    halfway, or the run called a change there with its estimate beyond halfway (a sequential run stops once a
    change is sure, its interval still wide); good where, in every one, its interval lies wholly short of
    halfway; else undecided. (A commit carries bad's change or not: which side of halfway, not whether it is
    exactly good.)"""
    mine = [c for c in cells if f"{c.subject} {c.cell}" in signature]
    if not mine:
        return "failed", "none of the cells bad changed in was measured"
    sides, parts = [], []
    for cell in mine:
        bad = signature[f"{cell.subject} {cell.cell}"]
        figure = cell.work if in_work else cell.time
        side = _side(figure, bad, cell.work_changed if in_work else cell.time_changed)
        sides.append(side)
        shown = "not measured" if figure is None else f"{figure.value:.3g}×{_spread(figure)}"
        parts.append(f"{cell.subject} {cell.cell}: {shown}, {side} (halfway to {bad:.3g}×: {math.sqrt(bad):.3g}×)")
    said = "; ".join(parts)
    if "as bad" in sides:
        return "bad", said
    return ("good" if all(side == "as good" for side in sides) else "undecided"), said


def _side(figure: Interval | None, bad: float, changed: bool) -> str:
    """Which side of halfway to bad's B ÷ A a cell lies on: "as bad", "as good" or "undecided"."""
    if figure is None or figure.low is None or figure.high is None:
        return "undecided"
    halfway = math.sqrt(bad)
    beyond = figure.high < halfway if bad < 1 else figure.low > halfway
    beyond |= changed and (figure.value < halfway if bad < 1 else figure.value > halfway)
    short = figure.low > halfway if bad < 1 else figure.high < halfway
    return "as bad" if beyond else "as good" if short else "undecided"


def _spread(figure: Interval) -> str:
    """An interval's ends and level: " (97.5 %: 0.91× to 1.1×)"."""
    if figure.low is None or figure.high is None:
        return ""
    return f" ({fmt_level(figure)}: {figure.low:.3g}× to {figure.high:.3g}×)"


def _cells_said(cells: list[PairedCell]) -> str:
    """Each cell's B ÷ A of req/s in a few words: "framework c1-k: 0.0017× (changed)"."""
    parts = []
    for cell in cells:
        if cell.time is None:
            parts.append(f"{cell.subject} {cell.cell}: not measured")
            continue
        state = "changed" if cell.time_changed else "no change" if cell.time_decided else "undecided"
        parts.append(f"{cell.subject} {cell.cell}: {cell.time.value:.3g}× ({state})")
    return "; ".join(parts) or "no cells"


def _ended_said(state: Bisection) -> str:
    """The outcome in a sentence."""
    if state.first_bad is None:
        return "bisect: not ended"
    measured = len(state.steps)
    minutes = state.wall_s / 60
    if state.remaining:
        return (
            f"bisect: the first bad commit is one of {len(state.remaining)} (others could not be told): "
            f"{', '.join(c[:10] for c in state.remaining)}; {measured} steps, {minutes:.0f} min"
        )
    return (
        f"bisect: {state.first_bad.id[:10]} ({state.first_bad.date[:10]}, {state.first_bad.subject!r}) is the first "
        f"bad commit, after {measured} measured steps and {minutes:.0f} min; its A/B against its parent: {state.last}"
    )


def _kept(folder: Path, asking: Asking, good: SourceCommit, bad: SourceCommit) -> Bisection | None:
    """The kept state of this bisection (None: none yet); one asked otherwise (subjects, cells, profile) is
    refused in one line."""
    path = folder / STATE_FILE
    if not path.is_file():
        return None
    state = Bisection.from_json(read_json(path), path)
    if (state.subjects, state.cells, state.profile) != (asking.subjects, asking.cells, asking.profile):
        raise BenchError(
            f"{path.parent.name} was bisected with other subjects, cells or profile: remove {path.parent} to start anew"
        )
    say(f"bisect: going on from {len(state.steps)} kept steps in {path.parent.name}")
    return state


def _keep(folder: Path, state: Bisection) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / STATE_FILE, state.to_json())


def _git(repo: Path, argv: list[str]) -> str:
    done = subprocess.run(["git", "-C", str(repo), *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BenchError(f"git {argv[0]} failed ({done.stderr.strip().splitlines()[-1:]})")
    return done.stdout


def bisect_asked(asking: Asking, where: Where) -> Path:
    """`invoke bisect` as asked, its arguments checked first (each problem one line): a local repository made
    absolute, the profile chosen (bisect where the recipe's conf has one, else versus), the cells known."""
    recipe = load_recipe(asking.recipe, where.recipes, where.conf)
    repo = asking.repo
    if not Source(asking.package, "git", repo).is_url:
        folder = Path(repo).expanduser()
        if not folder.is_dir():
            raise BenchError(
                f"--repo {repo}: no folder there: give a clone of {asking.package}'s repository, or its URL"
            )
        repo = str(folder.resolve())
    profile = asking.profile or ("bisect" if "bisect" in recipe.profiles else "versus")
    recipe.profile(profile)  # a one-line error where the recipe has no such profile
    # the last A/B in both currencies: versus counts instructions where the steps' profile does not
    counts = recipe.profile(profile).counting is not None
    last_profile = profile if counts or "versus" not in recipe.profiles else "versus"
    unknown = [cell for cell in asking.cells if recipe.cell(cell) is None]
    if unknown:
        known = ", ".join(cell.name for cell in recipe.cells)
        raise BenchError(f"{recipe.name} has no cell {', '.join(unknown)}: choose among {known}")
    return bisect(replace(asking, repo=repo, profile=profile, last_profile=last_profile), where)
