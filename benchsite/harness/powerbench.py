"""A benchmark of `invoke versus` itself: how large a change it sees, in time and in work.

The framework app of cherrypy-speed is slowed on purpose: a busy loop, `sum(range(n))`, added to its handler,
with n calibrated so that the loop takes a given share of the framework's time per request at -c 1 (the
request time from a first A/A run, the loop's time from timeit on the server's CPU). For each share (0 %: an
A/A run, the app unchanged on both sides) `runs` A/B runs are made, the shares taken in turn, so a slow hour
of the machine falls on all of them. The runs go to data/experiments/power/<recipe>/ and their ids to
data/method/power.toml: the calibration page recomputes from the runs which ones called a change.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.model.variant import VARIANTS_DIR
from benchsite.results.store import list_runs, load_view

EXPERIMENT_DIR = Path("experiments") / "power"
RECIPE = "cherrypy-speed"
SUBJECT = "framework"
APP = "framework_app.py"
HANDLER_RETURN = '        return b"OK"\n'
TIMEIT = (
    "import timeit; n = 10_000; "
    "print(min(timeit.repeat('sum(range(n))', globals={'n': n}, number=200, repeat=7)) / 200 / n)"
)


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


def seconds_per_step(cpu: int) -> float:
    """The time of one step of `sum(range(n))` in this interpreter on the server's CPU (timeit's best of 7)."""
    result = subprocess.run(
        [sys.executable, "-c", TIMEIT],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),
    )
    if result.returncode != 0:
        raise BenchError(f"timing the busy loop failed: {result.stderr.strip().splitlines()[-1:]}")
    return float(result.stdout)


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


def framework_seconds_per_request(run: Path) -> float:
    """The A side's time per request at -c 1 in a run: one over its median req/s."""
    figure = load_view(run).figure(f"{SUBJECT}-a", "c1")
    median = figure.summary.median() if figure else None
    if not median:
        raise BenchError(f"{run.name}: the framework's -c 1 was not measured: the calibration needs it")
    return 1.0 / median


def power_runs(
    repo: Path, data_dir: Path, shares: tuple[float, ...], runs: int, profile: str, cpu: int, say: Callable[[str], None]
) -> dict[float, tuple[int, list[str]]]:
    """{share: (loop size, run ids)}: a first A/A run calibrates the loop, then `runs` runs of each share in
    turn (the first A/A run counts as one)."""
    if runs < 2:
        raise BenchError("--runs must be at least 2: a share of one run says nothing")
    unchanged = slowed_app(repo, 0)
    first = versus_run(repo, data_dir, profile, unchanged, say)
    request_s, step_s = framework_seconds_per_request(first), seconds_per_step(cpu)
    loops = {share: round(share * request_s / step_s) for share in shares}
    say(f"calibration: {request_s * 1e6:.0f} µs per request, {step_s * 1e9:.2f} ns per step: loops {loops}")
    made: dict[float, list[str]] = {share: [] for share in shares}
    if 0.0 in made:
        made[0.0].append(first.name)
    for index in range(runs):
        for share in shares:
            if len(made[share]) > index:
                continue
            made[share].append(versus_run(repo, data_dir, profile, slowed_app(repo, loops[share]), say).name)
    return {share: (loops[share], made[share]) for share in shares}


def method_record(found: dict[float, tuple[int, list[str]]], profile: str) -> str:
    """data/method/power.toml: one set of A/B runs per injected slowdown, by id (the page recomputes the rest)."""
    lines = [
        "# Written by `invoke powerbench`: A/B runs of cherrypy-speed's framework app against itself slowed by a busy",
        "# loop in its handler. Run ids only: the calibration page recomputes every figure from the runs.",
        "format_version = 1",
        'title = "What an A/B run can see"',
        f'question = "{len(next(iter(found.values()))[1])} A/B runs ({profile} profile) per injected slowdown of the '
        "framework's -c 1 request time: how often does each currency call the change?\"",
    ]
    for share, (loop, ids) in found.items():
        label = f"{100 * share:g} %" + (f" (sum(range({loop})))" if loop else " (A/A)")
        lines += [
            "",
            "[[sets]]",
            f'label = "{label}"',
            f'recipe = "{RECIPE}"',
            f'data_dir = "{EXPERIMENT_DIR.as_posix()}"',
            "runs = [" + ", ".join(f'"{run}"' for run in ids) + "]",
        ]
    return "\n".join(lines) + "\n"
