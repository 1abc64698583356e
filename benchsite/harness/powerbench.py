"""A benchmark of `invoke versus` itself: how large a change it sees, in time and in work.

The framework app of cherrypy-speed is slowed on purpose: a busy loop, `sum(range(n))`, added to its handler,
with n calibrated so that the loop adds a given share to the framework's instructions per request at -c 1. A
first A/B run against a loop of PILOT_STEPS gives, exactly, the instructions of one step in the server
itself (timeit outside the server put a step at 17 ns, the server's -c 1 time at about 40: a loop's time
depends on where it runs, its instructions do not). Then for each share (0 %: an A/A run, the app unchanged
on both sides) `runs` A/B runs are made, the shares taken in turn, so a slow hour of the machine falls on all
of them. The runs go to data/experiments/power/<recipe>/ and their ids to
data/method/power.toml: the calibration page recomputes from the runs which ones called a change.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.model.variant import VARIANTS_DIR
from benchsite.results.store import list_runs, load_view

EXPERIMENT_DIR = Path("experiments") / "power"
RECIPE = "cherrypy-speed"
SUBJECT = "framework"
APP = "framework_app.py"
HANDLER_RETURN = '        return b"OK"\n'
PILOT_STEPS = 4000  # about +50 % of the framework's instructions: the step's cost is read to 0.1 %


@dataclass(frozen=True)
class PowerSet:
    """The runs of one injected slowdown (or the pilot), labelled as the page shows them."""

    label: str
    runs: list[str]


def slowed_app(repo: Path, loop: int) -> Path:
    """A folder holding the framework app with `sum(range(loop))` in its handler (loop 0: unchanged)."""
    source = (repo / "recipes" / RECIPE / APP).read_text()
    if HANDLER_RETURN not in source:
        raise BenchError(f"recipes/{RECIPE}/{APP} no longer returns {HANDLER_RETURN.strip()!r}: update powerbench")
    folder = VARIANTS_DIR / "power" / f"loop-{loop}"
    folder.mkdir(parents=True, exist_ok=True)
    slowed = source.replace(HANDLER_RETURN, f"        sum(range({loop}))  # slowed on purpose\n{HANDLER_RETURN}")
    (folder / APP).write_text(slowed if loop else source)
    return folder


def versus_run(repo: Path, data_dir: Path, profile: str, folder: Path, say: Callable[[str], None]) -> Path:
    """One A/B run: the checkout's framework app (A) against the folder's (B)."""
    runs = data_dir / EXPERIMENT_DIR / RECIPE
    before = set(list_runs(runs))
    argv = [sys.executable, "-m", "invoke", "versus", RECIPE, "-b", f"dir:{folder}", "--subjects", SUBJECT]
    argv += ["--profile", profile, "--data-dir", str(data_dir / EXPERIMENT_DIR)]
    result = subprocess.run(argv, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=900)
    made = sorted(set(list_runs(runs)) - before)
    if result.returncode != 0 or not made:
        last = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise BenchError(f"invoke versus exited with code {result.returncode}: {last}")
    say(f"{made[-1].name}: B = {folder.name}")
    return made[-1]


def instructions_per_step(run: Path) -> tuple[float, float]:
    """The framework's instructions per request (A) and the loop's per step, from the pilot's counts."""
    counting = load_view(run).run.counting
    counts = [counting.of(f"{SUBJECT}-{side}", "c1") if counting else None for side in "ab"]
    a, b = (count.per_request if count else None for count in counts)
    if a is None or b is None:
        raise BenchError(f"{run.name}: the framework was not counted under callgrind: the calibration needs it")
    return a, (b - a) / PILOT_STEPS


def power_runs(
    repo: Path, data_dir: Path, shares: tuple[float, ...], runs: int, profile: str, say: Callable[[str], None]
) -> list[PowerSet]:
    """The pilot run that calibrates the loop, then `runs` runs of each share in turn: each set's runs."""
    if runs < 2:
        raise BenchError("--runs must be at least 2: a share of one run says nothing")
    pilot = versus_run(repo, data_dir, profile, slowed_app(repo, PILOT_STEPS), say)
    per_request, per_step = instructions_per_step(pilot)
    loops = {share: round(share * per_request / per_step) for share in shares}
    say(f"calibration: {per_request:,.0f} instructions per request, {per_step:.1f} per step: loops {loops}")
    made: dict[float, list[str]] = {share: [] for share in shares}
    for _ in range(runs):
        for share in shares:
            made[share].append(versus_run(repo, data_dir, profile, slowed_app(repo, loops[share]), say).name)
    sets = [PowerSet(f"pilot (sum(range({PILOT_STEPS})), calibrates the loop)", [pilot.name])]
    for share in shares:
        loop = f" (sum(range({loops[share]})))" if loops[share] else " (A/A)"
        sets.append(PowerSet(f"{100 * share:g} %{loop}", made[share]))
    return sets


def method_record(sets: list[PowerSet], runs: int, profile: str) -> str:
    """data/method/power.toml: one set of A/B runs per injected slowdown, by id (the page recomputes the rest)."""
    lines = [
        "# Written by `invoke powerbench`: A/B runs of cherrypy-speed's framework app against itself slowed by a busy",
        "# loop in its handler. Run ids only: the calibration page recomputes every figure from the runs.",
        "format_version = 1",
        'title = "What an A/B run can see"',
        f"question = \"{runs} A/B runs ({profile} profile) per injected slowdown of the framework's instructions per "
        'request at -c 1: how often does each currency call the change?"',
    ]
    for each in sets:
        lines += ["", "[[sets]]", f'label = "{each.label}"', f'recipe = "{RECIPE}"']
        lines += [
            f'data_dir = "{EXPERIMENT_DIR.as_posix()}"',
            "runs = [" + ", ".join(f'"{r}"' for r in each.runs) + "]",
        ]
    return "\n".join(lines) + "\n"
