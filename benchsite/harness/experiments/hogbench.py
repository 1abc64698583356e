"""A benchmark of the interference rule: quiet runs of a recipe, each followed by a run during part of
which a CPU hog (a bounded busy loop) holds the servers' CPU.

Pair by pair: a quiet run, then a run with `--no-wait` into which a hog pinned to the servers' CPU is
started for a random 30-60 % of the quiet run's timed rounds, at a random moment within them (as the quiet
run placed its rounds after its launch). The runs go to
data/experiments/interference/<recipe>/ and their ids to data/method/interference.toml: the calibration
page recomputes, from the runs alone, what the rule did to their verdicts and intervals.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from benchsite.harness.processes.machine_lock import holding_the_machine
from benchsite.model.run import RunDocument
from benchsite.results.store import load_run

EXPERIMENT_DIR = Path("experiments") / "interference"
HOG_SHARE = (0.3, 0.6)  # of the quiet run's measuring time
# The hog waits out its own delay, then holds its CPU: started with its run, it needs no timer in the harness.
BUSY_LOOP = "import time\ntime.sleep({delay})\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"


@dataclass(frozen=True)
class HogPlan:
    """When a hog starts after its run does, for how long, and on which CPU."""

    delay_s: float
    seconds: float
    cpu: int

    @classmethod
    def drawn(cls, rng: random.Random, rounds_from_s: float, rounds_s: float, cpu: int) -> HogPlan:
        """A hog over a random 30-60 % of the timed rounds, which begin `rounds_from_s` after the launch."""
        seconds = rng.uniform(*HOG_SHARE) * rounds_s
        return cls(round(rounds_from_s + rng.uniform(0.0, rounds_s - seconds), 1), round(seconds, 1), cpu)


def rounds_window(run: RunDocument, launch_s: float) -> tuple[float, float]:
    """When a run's timed rounds began after its launch, and how long they took (from its repetitions)."""
    starts = [
        rep.started_after_s
        for subject in run.subjects
        for cell in subject.cells
        for rep in cell.repetitions
        if rep.started_after_s is not None
    ]
    first = min(starts, default=0.0)
    last = run.rounds.elapsed_s if run.rounds is not None else max(starts, default=first + 60.0)
    return launch_s + first, max(1.0, last - first)


# One run of the recipe into the experiment's folder (True: wait for a quiet machine first): the run's folder.
RecipeRun = Callable[[bool], Path]


def until_started(run: RunDocument, launched: float) -> float:
    """How long `invoke recipe` took from its launch to the start of the run's own clock (imports, loading): the
    wall time from launch to its end, less the run's own (its rounds and what followed them)."""
    started, finished = (datetime.fromisoformat(stamp) for stamp in (run.started_at, run.finished_at))
    return max(0.0, (time.monotonic() - launched) - (finished - started).total_seconds())


def busy_loop(plan: HogPlan, started: float) -> subprocess.Popen[bytes]:
    """The hog, pinned to its CPU, holding it from plan.delay_s after `started` for plan.seconds."""
    delay = max(0.0, plan.delay_s - (time.monotonic() - started))
    return subprocess.Popen(
        [sys.executable, "-c", BUSY_LOOP.format(delay=round(delay, 3), seconds=plan.seconds)],
        preexec_fn=lambda: os.sched_setaffinity(0, {plan.cpu}),
    )


@holding_the_machine
def hogged_pairs(
    recipe_run: RecipeRun, pairs: int, cpu: int, seed: int, say: Callable[[str], None]
) -> tuple[list[str], list[str]]:
    """Run `pairs` quiet runs, each followed by a hogged one; return both lists of run ids."""
    rng = random.Random(seed)
    quiet_ids, hogged_ids = [], []
    for index in range(1, pairs + 1):
        launched = time.monotonic()
        quiet = recipe_run(True)
        run_document = load_run(quiet)
        startup_s = until_started(run_document, launched)
        plan = HogPlan.drawn(rng, *rounds_window(run_document, startup_s), cpu)
        say(f"pair {index}: quiet {quiet.name}; hog {plan}")
        hog = busy_loop(plan, time.monotonic())
        try:
            hogged = recipe_run(False)
        finally:
            hog.kill()
            hog.wait()
        say(f"pair {index}: hogged {hogged.name}")
        quiet_ids.append(quiet.name)
        hogged_ids.append(hogged.name)
    return quiet_ids, hogged_ids


def method_record(recipe: str, quiet: list[str], hogged: list[str], profile: str) -> str:
    """data/method/interference.toml: the two sets of runs, by id (the page recomputes every figure)."""

    def ids(runs: list[str]) -> str:
        return "[" + ", ".join(f'"{run}"' for run in runs) + "]"

    return (
        "# Written by `invoke hogbench`: quiet runs, each followed by a run during part of which a CPU hog held the\n"
        "# servers' CPU. Run ids only: the calibration page recomputes every figure from the runs.\n"
        "format_version = 1\n"
        'title = "Timing under a CPU hog"\n'
        f'question = "{len(quiet)} {profile} runs of {recipe} on a quiet machine, each followed by one during a '
        "random 30-60 % of whose timed rounds a busy loop held the servers' CPU: do the hogged runs decide a claim "
        'the other way from the quiet runs pooled, with the interference rule and without it?"\n\n'
        f'[[sets]]\nlabel = "quiet"\nrecipe = "{recipe}"\ndata_dir = "{EXPERIMENT_DIR.as_posix()}"\n'
        f"runs = {ids(quiet)}\n\n"
        f'[[sets]]\nlabel = "hogged"\nrecipe = "{recipe}"\ndata_dir = "{EXPERIMENT_DIR.as_posix()}"\n'
        f"runs = {ids(hogged)}\n"
    )
