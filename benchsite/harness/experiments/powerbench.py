"""A benchmark of `invoke versus` itself: how large a change it sees, in time and in work.

The framework app of cherrypy-speed is slowed on purpose: a busy loop, `sum(repeat(1, n))` (each step the
same work, so its cost grows linearly with n, unlike `sum(range(n))`), added to its handler, with n calibrated
so that the loop adds a given share to the framework's time per request at -c 1, or to its instructions. A
first A/B run against a loop of PILOT_STEPS measures what one step adds, in the server itself (timeit outside
it put a step's time at less than half of what it costs there). Then for each level (A/A: the app unchanged
on both sides) `runs` A/B runs are made, the levels taken in turn, so a slow hour of the machine falls on all
of them. The runs go to data/experiments/power/<recipe>/ and their ids to
data/method/power.toml: the calibration page recomputes from the runs which ones called a change.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import count, islice
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.experiments.hogbench import HogPlan, busy_loop, rounds_window, until_started
from benchsite.model.method import MethodRecord
from benchsite.model.variant import VARIANTS_DIR
from benchsite.results.comparing import paired_cells
from benchsite.results.power import PILOT, power_cell
from benchsite.results.store import load_run, load_view

EXPERIMENT_DIR = Path("experiments") / "power"
RECIPE = "cherrypy-speed"
APP = "framework_app.py"
HANDLER_RETURN = '        return b"OK"\n'
IMPORTS = "import sys\n"
PILOT_STEPS = 40_000  # tens of percent in time and in work: what a step adds is read to about 1 %


@dataclass(frozen=True)
class PowerSet:
    """The runs of one injected slowdown (or the pilot), labelled as the page shows them."""

    label: str
    runs: list[str]


def slowed_app(repo: Path, loop: int) -> Path:
    """A folder holding the framework app with `sum(repeat(1, loop))` in its handler (loop 0: unchanged)."""
    source = (repo / "recipes" / RECIPE / APP).read_text()
    if HANDLER_RETURN not in source:
        raise BenchError(f"recipes/{RECIPE}/{APP} no longer returns {HANDLER_RETURN.strip()!r}: update powerbench")
    folder = VARIANTS_DIR / "power" / f"loop-{loop:06d}"  # one length: both sides' paths as long as each other
    folder.mkdir(parents=True, exist_ok=True)
    slowed = source.replace(IMPORTS, f"{IMPORTS}from itertools import repeat\n", 1).replace(
        HANDLER_RETURN, f"        sum(repeat(1, {loop}))  # slowed on purpose\n{HANDLER_RETURN}"
    )
    (folder / APP).write_text(slowed if loop else source)
    return folder


# One A/B run of the framework app in one folder (A, unchanged) against the app in another (B): the run's folder.
# Both sides run from copies in folders of one name length, so that an A/A run's sides differ in nothing but
# their starts (the checkout's app runs from another path than a copy's).
VersusRun = Callable[[Path, Path], Path]


@dataclass(frozen=True)
class Level:
    """An injected slowdown: a share of the framework's time per request, or of its instructions, at -c 1."""

    share: float
    currency: str  # "time" or "work" ("" for the A/A level)

    @property
    def name(self) -> str:
        return f"{100 * self.share:g} % {self.currency}" if self.share else "A/A"


# On a quiet machine: the smallest changes an A/B run is meant to call; under a hog: the usual question.
LEVELS: tuple[Level, ...] = (Level(0.0, ""), Level(0.005, "work"), Level(0.01, "time"))
HOG_LEVELS: tuple[Level, ...] = (Level(0.0, ""), Level(0.05, "time"))


def step_shares(run: Path) -> dict[str, float]:
    """What one step of the loop adds to the framework at -c 1, as a share of its time and of its instructions
    per request, from the pilot run (B ÷ A of req/s and of instructions, over PILOT_STEPS steps)."""
    cell = power_cell(paired_cells(load_view(run)))
    if cell is None or cell.time is None or cell.work is None:
        raise BenchError(f"{run.name}: the pilot measured no B ÷ A of the framework at -c 1 in time and work")
    return {"time": (1 / cell.time.value - 1) / PILOT_STEPS, "work": (cell.work.value - 1) / PILOT_STEPS}


def calibrated_loops(pilot: Path, levels: tuple[Level, ...]) -> dict[Level, int]:
    """Each level's loop steps, from what a step added in the pilot run."""
    per_step = step_shares(pilot)
    return {level: round(level.share / per_step[level.currency]) if level.share else 0 for level in levels}


@dataclass
class PowerProgress:
    """A power benchmark under way: the pilot run that calibrated the loop, each level's A/B runs so far, and
    (--hog) where the pilot's rounds lay after its launch, so that an interrupted benchmark goes on alike."""

    pilot: Path
    made: dict[Level, list[str]]
    window: tuple[float, float] | None = None

    @property
    def count(self) -> int:
        return sum(len(runs) for runs in self.made.values())

    def sets(self, loops: dict[Level, int]) -> list[PowerSet]:
        """The pilot's set and each level's, labelled with the loop that made it."""
        sets = [PowerSet(f"{PILOT} (sum(repeat(1, {PILOT_STEPS})), calibrates the loop)", [self.pilot.name])]
        for level, runs in self.made.items():
            if not runs:
                continue
            loop = f" (sum(repeat(1, {loops[level]})))" if loops[level] else " (the same app on both sides)"
            sets.append(PowerSet(level.name + loop, runs))
        return sets


def piloted(repo: Path, versus_run: VersusRun, levels: tuple[Level, ...], hog: bool) -> PowerProgress:
    """The pilot A/B run (on a quiet machine): a benchmark with no level's run yet."""
    launched = time.monotonic()
    pilot = versus_run(slowed_app(repo, 0), slowed_app(repo, PILOT_STEPS))
    window = rounds_window(load_run(pilot), until_started(load_run(pilot), launched)) if hog else None
    return PowerProgress(pilot, {level: [] for level in levels}, window)


def power_runs(
    repo: Path,
    runs: int,
    versus_run: VersusRun,
    keep: Callable[[PowerProgress, dict[Level, int]], None],
    say: Callable[[str], None],
    hog: HogChoice | None = None,
    resumed: PowerProgress | None = None,
) -> PowerProgress:
    """The pilot run that calibrates the loop, then runs of each level in turn until each has `runs` (each under
    a hog of its own where `hog` is given), `keep` called after every run; a `resumed` benchmark goes on where
    it stopped, with the hogs it would have drawn had it not stopped."""
    if runs < 2:
        raise BenchError("--runs must be at least 2: a share of one run says nothing")
    levels = HOG_LEVELS if hog else LEVELS
    progress = resumed or piloted(repo, versus_run, levels, hog is not None)
    loops = calibrated_loops(progress.pilot, levels)
    say(f"calibration: loops { ({level.name: n for level, n in loops.items()}) }")
    keep(progress, loops)
    plans = hog_plans(hog, progress.window, progress.count) if hog and progress.window else None
    unchanged = slowed_app(repo, 0)
    for turn in range(runs):
        for level in levels:
            if len(progress.made[level]) > turn:
                continue
            folder = slowed_app(repo, loops[level])
            made = (
                hogged(versus_run, unchanged, folder, next(plans), say=say) if plans else versus_run(unchanged, folder)
            )
            progress.made[level].append(made.name)
            keep(progress, loops)
    return progress


@dataclass(frozen=True)
class HogChoice:
    """Where the hog runs and the random draws of its share and moment."""

    cpu: int
    rng: random.Random


def hog_plans(hog: HogChoice, window: tuple[float, float], made: int) -> Iterator[HogPlan]:
    """One hog per run over a random 30-60 % of its rounds, placed as the pilot placed its rounds after its launch
    (`window`: when they began, and how long they took); the plans of the `made` runs already made are drawn all
    the same and skipped, so that a resumed benchmark draws what it would have drawn."""
    plans = (HogPlan.drawn(hog.rng, *window, hog.cpu) for _ in count())
    return islice(plans, made, None)


def hogged(versus_run: VersusRun, unchanged: Path, folder: Path, plan: HogPlan, *, say: Callable[[str], None]) -> Path:
    """One A/B run with the planned hog on its CPU."""
    busy = busy_loop(plan, time.monotonic())
    try:
        made = versus_run(unchanged, folder)
    finally:
        busy.kill()
        busy.wait()
    say(f"{made.name}: hog {plan}")
    return made


UNDER_WAY = "# Under way:"  # the record's line while a level has fewer runs than asked
WINDOW_KEYS = ("hog_rounds_from_s", "hog_rounds_s")  # made_with: where the pilot's rounds lay after its launch


def method_record(progress: PowerProgress, loops: dict[Level, int], runs: int, profile: str) -> str:
    """data/method/power.toml (power-busy.toml): one set of A/B runs per injected slowdown, by id (the page
    recomputes the rest), and what a resumed benchmark needs to go on alike."""
    hog = progress.window is not None
    busy = " on a quiet machine"
    if hog:
        busy = ", each with a busy loop pinned to the servers' CPU for a random 30-60 % of it"
    lines = [
        "# Written by `invoke powerbench`: A/B runs of cherrypy-speed's framework app against itself slowed by a busy",
        "# loop in its handler. Run ids only: the calibration page recomputes every figure from the runs.",
    ]
    if any(len(made) < runs for made in progress.made.values()):
        lines.append(f"{UNDER_WAY} `invoke powerbench{' --hog' if hog else ''} --resume` goes on with it.")
    lines += [
        "format_version = 1",
        f'title = "What an A/B run can see{" on a busy machine" if hog else ""}"',
        f'question = "{runs} A/B runs ({profile} profile) per injected slowdown of the framework at -c 1 (a share of '
        f'its time per request, or of its instructions){busy}: how often does each currency call the change?"',
    ]
    if progress.window is not None:
        window = zip(WINDOW_KEYS, progress.window, strict=True)
        lines += ["", "[made_with]"] + [f"{key} = {value:.3f}" for key, value in window]
    for each in progress.sets(loops):
        lines += ["", "[[sets]]", f'label = "{each.label}"', f'recipe = "{RECIPE}"']
        lines += [
            f'data_dir = "{EXPERIMENT_DIR.as_posix()}"',
            "runs = [" + ", ".join(f'"{r}"' for r in each.runs) + "]",
        ]
    return "\n".join(lines) + "\n"


def progress_of(record: MethodRecord, runs_dir: Path, hog: bool, source: str) -> PowerProgress:
    """An interrupted benchmark, read back from its record (`runs_dir`: where its recipe's runs are)."""
    pilot, *sets = record.sets
    if not pilot.label.startswith(PILOT):
        raise BenchError(f"{source}: its first set is no pilot run: run invoke powerbench anew, without --resume")
    levels = {level.name: level for level in (HOG_LEVELS if hog else LEVELS)}
    made: dict[Level, list[str]] = {level: [] for level in levels.values()}
    for each in sets:
        level = levels.get(each.label.split(" (")[0])
        if level is None:
            kind, other = ("busy (--hog)", "without") if hog else ("quiet", "with")
            raise BenchError(f"{source}: {each.label!r} is no level of a {kind} benchmark: resume it {other} --hog")
        made[level] = list(each.runs)
    window = None
    if hog:
        if not set(WINDOW_KEYS) <= set(record.made_with):
            raise BenchError(f"{source}: no [made_with] window of the hogs: run invoke powerbench --hog anew")
        window = (record.made_with[WINDOW_KEYS[0]], record.made_with[WINDOW_KEYS[1]])
    return PowerProgress(runs_dir / pilot.runs[0], made, window)
