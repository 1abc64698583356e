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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.experiments.hogbench import HogPlan, busy_loop, rounds_window, until_started
from benchsite.harness.processes.machine_lock import holding_the_machine
from benchsite.model.variant import VARIANTS_DIR
from benchsite.results.store import load_run, load_view
from benchsite.results.versus import paired_cells

EXPERIMENT_DIR = Path("experiments") / "power"
RECIPE = "cherrypy-speed"
SUBJECT = "framework"
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
    cell = next((c for c in paired_cells(load_view(run)) if c.subject == SUBJECT and c.cell == "c1"), None)
    if cell is None or cell.time is None or cell.work is None:
        raise BenchError(f"{run.name}: the pilot measured no B ÷ A of the framework at -c 1 in time and work")
    return {"time": (1 / cell.time.value - 1) / PILOT_STEPS, "work": (cell.work.value - 1) / PILOT_STEPS}


@holding_the_machine
def power_runs(
    repo: Path, runs: int, versus_run: VersusRun, say: Callable[[str], None], hog: HogChoice | None = None
) -> list[PowerSet]:
    """The pilot run that calibrates the loop (on a quiet machine), then `runs` runs of each level in turn (each
    under a hog of its own where `hog` is given): each set's runs."""
    if runs < 2:
        raise BenchError("--runs must be at least 2: a share of one run says nothing")
    levels = HOG_LEVELS if hog else LEVELS
    launched = time.monotonic()
    unchanged = slowed_app(repo, 0)
    pilot = versus_run(unchanged, slowed_app(repo, PILOT_STEPS))
    window = rounds_window(load_run(pilot), until_started(load_run(pilot), launched))
    per_step = step_shares(pilot)
    loops = {level: round(level.share / per_step[level.currency]) if level.share else 0 for level in levels}
    say(f"calibration: a step adds {per_step}: loops { ({level.name: n for level, n in loops.items()}) }")
    made: dict[Level, list[str]] = {level: [] for level in levels}
    for _ in range(runs):
        for level in levels:
            folder = slowed_app(repo, loops[level])
            made[level].append(
                (hogged(versus_run, unchanged, folder, window, hog, say) if hog else versus_run(unchanged, folder)).name
            )
    sets = [PowerSet(f"pilot (sum(repeat(1, {PILOT_STEPS})), calibrates the loop)", [pilot.name])]
    for level in levels:
        loop = f" (sum(repeat(1, {loops[level]})))" if loops[level] else " (the same app on both sides)"
        sets.append(PowerSet(level.name + loop, made[level]))
    return sets


@dataclass(frozen=True)
class HogChoice:
    """Where the hog runs and the random draws of its share and moment."""

    cpu: int
    rng: random.Random


def hogged(
    versus_run: VersusRun,
    unchanged: Path,
    folder: Path,
    window: tuple[float, float],
    hog: HogChoice,
    say: Callable[[str], None],
) -> Path:
    """One A/B run with a hog over a random 30-60 % of its rounds, placed as the pilot placed its rounds after
    its launch (`window`: when they began, and how long they took)."""
    plan = HogPlan.drawn(hog.rng, *window, hog.cpu)
    busy = busy_loop(plan, time.monotonic())
    try:
        made = versus_run(unchanged, folder)
    finally:
        busy.kill()
        busy.wait()
    say(f"{made.name}: hog {plan}")
    return made


def method_record(sets: list[PowerSet], runs: int, profile: str, hog: bool = False) -> str:
    """data/method/power.toml: one set of A/B runs per injected slowdown, by id (the page recomputes the rest)."""
    busy = (
        ", each with a busy loop pinned to the servers' CPU for a random 30-60 % of it"
        if hog
        else " on a quiet machine"
    )
    lines = [
        "# Written by `invoke powerbench`: A/B runs of cherrypy-speed's framework app against itself slowed by a busy",
        "# loop in its handler. Run ids only: the calibration page recomputes every figure from the runs.",
        "format_version = 1",
        f'title = "What an A/B run can see{" on a busy machine" if hog else ""}"',
        f'question = "{runs} A/B runs ({profile} profile) per injected slowdown of the framework at -c 1 (a share of '
        f'its time per request, or of its instructions){busy}: how often does each currency call the change?"',
    ]
    for each in sets:
        lines += ["", "[[sets]]", f'label = "{each.label}"', f'recipe = "{RECIPE}"']
        lines += [
            f'data_dir = "{EXPERIMENT_DIR.as_posix()}"',
            "runs = [" + ", ".join(f'"{r}"' for r in each.runs) + "]",
        ]
    return "\n".join(lines) + "\n"
