"""A benchmark of the interference rule: quiet runs of a recipe, each followed by a run during part of
which a CPU hog (a bounded busy loop) holds the servers' CPU.

Pair by pair: a quiet run, then a run with `--no-wait` into which a hog is started after a random delay,
for a random 30-60 % of the quiet run's measuring time, pinned to the servers' CPU. The runs go to
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
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.results.store import list_runs, load_run

EXPERIMENT_DIR = Path("experiments") / "interference"
HOG_SHARE = (0.3, 0.6)  # of the quiet run's measuring time
BUSY_LOOP = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"


@dataclass(frozen=True)
class HogPlan:
    """When a hog starts after its run does, for how long, and on which CPU."""

    delay_s: float
    seconds: float
    cpu: int

    @classmethod
    def drawn(cls, rng: random.Random, measuring_s: float, cpu: int) -> HogPlan:
        share = rng.uniform(*HOG_SHARE)
        seconds = share * measuring_s
        return cls(round(rng.uniform(0.0, measuring_s - seconds), 1), round(seconds, 1), cpu)


def _invoke_recipe(repo: Path, recipe: str, profile: str, data_dir: Path, *extra: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "invoke", "recipe", recipe, "--profile", profile, "--data-dir", str(data_dir)]
    return subprocess.Popen([*argv, *extra], cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _finished(process: subprocess.Popen[str], recipe_dir: Path, before: set[Path]) -> Path:
    """The run a finished `invoke recipe` stored; a failed one is a one-line error."""
    _, stderr = process.communicate(timeout=1800)
    made = sorted(set(list_runs(recipe_dir)) - before)
    if process.returncode != 0 or not made:
        last = (stderr.strip().splitlines() or ["no message"])[-1]
        raise BenchError(f"invoke recipe exited with code {process.returncode}: {last}")
    return made[-1]


def _hog(plan: HogPlan) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", BUSY_LOOP.format(seconds=plan.seconds)],
        preexec_fn=lambda: os.sched_setaffinity(0, {plan.cpu}),
    )


def hogged_pairs(
    repo: Path,
    data_dir: Path,
    recipe: str,
    profile: str,
    pairs: int,
    cpu: int,
    seed: int,
    say: Callable[[str], None],
) -> tuple[list[str], list[str]]:
    """Run `pairs` quiet runs, each followed by a hogged one; return both lists of run ids."""
    rng = random.Random(seed)
    target = data_dir / EXPERIMENT_DIR
    recipe_dir = target / recipe
    quiet_ids, hogged_ids = [], []
    for index in range(1, pairs + 1):
        before = set(list_runs(recipe_dir))
        quiet = _finished(_invoke_recipe(repo, recipe, profile, target), recipe_dir, before)
        rounds = load_run(quiet).rounds
        measuring_s = rounds.elapsed_s if rounds is not None else 60.0
        plan = HogPlan.drawn(rng, measuring_s, cpu)
        say(f"pair {index}: quiet {quiet.name} ({measuring_s:.0f} s measuring); hog {plan}")
        before = set(list_runs(recipe_dir))
        run = _invoke_recipe(repo, recipe, profile, target, "--no-wait")
        time.sleep(plan.delay_s)
        hog = _hog(plan)
        try:
            hogged = _finished(run, recipe_dir, before)
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
        "random 30-60 % of which a busy loop held the servers' CPU: do the hogged runs decide a claim the other "
        'way from the quiet runs pooled, with the interference rule and without it?"\n\n'
        f'[[sets]]\nlabel = "quiet"\nrecipe = "{recipe}"\ndata_dir = "{EXPERIMENT_DIR.as_posix()}"\n'
        f"runs = {ids(quiet)}\n\n"
        f'[[sets]]\nlabel = "hogged"\nrecipe = "{recipe}"\ndata_dir = "{EXPERIMENT_DIR.as_posix()}"\n'
        f"runs = {ids(hogged)}\n"
    )
