"""The method's own benchmarks: the runs `invoke powerbench` and `invoke hogbench` make, each through the same
session as `invoke versus` and `invoke recipe` (machine name, quiet check, leftovers, exit policy); the harness
against bare ab (`invoke overhead`); signals at random moments of real runs (`invoke faults`)."""

from __future__ import annotations

import random
import signal
from collections.abc import Callable
from pathlib import Path

from benchsite.commands.kinds import SidesRuns
from benchsite.commands.recipe import Asked, Where, session
from benchsite.commands.terminal import overhead_ratio, print_trials
from benchsite.errors import BenchError
from benchsite.harness.engine.runner import RunChoices
from benchsite.harness.experiments.faults import SIGNALS, inject
from benchsite.harness.experiments.hogbench import EXPERIMENT_DIR as HOG_DIR
from benchsite.harness.experiments.hogbench import RecipeRun, hogged_pairs
from benchsite.harness.experiments.hogbench import method_record as hog_record
from benchsite.harness.experiments.overhead import compare_with_bare_ab
from benchsite.harness.experiments.powerbench import EXPERIMENT_DIR as POWER_DIR
from benchsite.harness.experiments.powerbench import (
    RECIPE,
    UNDER_WAY,
    HogChoice,
    Level,
    PowerProgress,
    VersusRun,
    method_record,
    power_runs,
    progress_of,
)
from benchsite.harness.processes.machine_lock import measuring
from benchsite.model.method import METHOD_DIR
from benchsite.model.recipe import load_recipe
from benchsite.model.upgrade import read_method
from benchsite.results.power import POWER_SUBJECT
from benchsite.results.store import list_runs, write_text


def stored_run(asked: Asked, where: Where) -> Path:
    """Run one session and return the run it stored (a session that stored none is an error)."""
    before = set(list_runs(where.target / asked.name))
    session(asked, where)
    made = sorted(set(list_runs(where.target / asked.name)) - before)
    if not made:
        raise BenchError(f"the {asked.profile} run of {asked.name} stored no run")
    return made[-1]


def versus_runs(where: Where, profile: str, say: Callable[[str], None]) -> VersusRun:
    """A/B runs of cherrypy-speed's framework app: one folder's (A) against another's (B)."""

    def run(unchanged: Path, folder: Path) -> Path:
        sides = (f"dir:{unchanged}", f"dir:{folder}")
        asked = Asked(  # A/A is a level
            name=RECIPE,
            profile=profile,
            clean=False,
            hosts="",
            machine="",
            keep_going=False,
            choices=RunChoices(),
            kind=SidesRuns(sides, (POWER_SUBJECT,), aa=True),
        )
        made = stored_run(asked, where)
        say(f"{made.name}: A = {unchanged.name}, B = {folder.name}")
        return made

    return run


def recipe_runs(where: Where, recipe: str, profile: str) -> RecipeRun:
    """Runs of a recipe, waiting for a quiet machine first or not (--no-wait)."""
    return lambda wait: stored_run(
        Asked(
            name=recipe,
            profile=profile,
            clean=False,
            hosts="",
            machine="",
            keep_going=False,
            choices=RunChoices(wait_for_quiet=wait),
        ),
        where,
    )


def power_record_name(profile: str, hog: bool) -> str:
    """The record a power benchmark writes: power.toml (power-busy.toml under a hog); another profile's runs
    (power-sequential) get a record of their own, so the committed curve of the power profile stays."""
    if hog:
        return "power-busy.toml"
    return "power.toml" if profile == "power" else f"{profile}.toml"


def power_bench(
    repo: Path, data_dir: Path, where: Where, runs: int, profile: str, hog_seed: int | None, resume: bool
) -> Path:
    """`invoke powerbench`: the pilot and the levels' runs (under a hog drawn from `hog_seed` where given), the
    method record naming them rewritten after every run (--resume: going on with it); the record's path."""
    recipe = load_recipe(RECIPE, repo / "recipes", repo / "conf")
    cpu = recipe.settings.server_cpu if recipe.settings.server_cpu is not None else 0
    hog = None if hog_seed is None else HogChoice(cpu, random.Random(hog_seed))
    record = data_dir / METHOD_DIR / power_record_name(profile, hog is not None)
    shown = str(record.relative_to(repo) if record.is_relative_to(repo) else record)
    if resume and not record.is_file():
        raise BenchError(f"--resume: there is no {shown} to go on with: run invoke powerbench without --resume")
    if not resume and record.is_file() and UNDER_WAY in record.read_text():
        raise BenchError(f"{shown} is under way: go on with it with --resume, or delete it to start anew")
    resumed = progress_of(read_method(record), where.target / RECIPE, hog is not None, shown) if resume else None

    def keep(progress: PowerProgress, loops: dict[Level, int]) -> None:
        write_text(record, method_record(progress, loops, runs, profile))

    with measuring():  # the whole benchmark, its runs one after another, with no other between them
        power_runs(
            repo=repo,
            runs=runs,
            versus_run=versus_runs(where, profile, print),
            keep=keep,
            say=print,
            hog=hog,
            resumed=resumed,
        )
    return record


def overhead(recipe: str, subject: str, cell: str, runs: tuple[int, int], where: Where) -> list[str]:
    """The harness's req/s against bare ab of the same argv, `runs` = (rounds, requests), interleaved; what it
    found, in lines."""
    rounds, requests = runs
    if rounds < 1 or requests < 1:
        raise BenchError("--rounds and --requests must be at least 1")
    loaded = load_recipe(recipe, where.recipes, where.conf)
    record, run_dir = compare_with_bare_ab(
        recipe=loaded,
        subject_name=subject,
        cell_name=cell,
        rounds=rounds,
        requests=requests,
        data_dir=where.target,
        repo=where.repo,
    )
    return [
        f"harness median {record.harness_rps_median:,.1f} req/s, bare ab median "
        f"{record.bare_rps_median:,.1f} req/s ({rounds} rounds each; raw outputs in {run_dir})",
        f"harness ÷ bare ab, round by round: {overhead_ratio(record)}",
    ]


def hogbench(where: Where, recipe: str, profile: str, pairs: tuple[int, int]) -> Path:
    """Quiet runs, each followed by one with a CPU hog on the servers' CPU, `pairs` = (how many, seed); the
    method record it writes for the calibration page."""
    count, seed = pairs
    settings = load_recipe(recipe, where.recipes, where.conf).settings
    cpu = settings.server_cpu if settings.server_cpu is not None else 0
    runs = Where(repo=where.repo, recipes=where.recipes, conf=where.conf, data=where.data, target=where.data / HOG_DIR)
    quiet, hogged = hogged_pairs(recipe_runs(runs, recipe, profile), count, cpu, seed, say=print)
    written = where.data / METHOD_DIR / "interference.toml"
    write_text(written, hog_record(recipe, quiet, hogged, profile))
    return written


def powerbench(where: Where, runs: int, profile: str, hog: tuple[bool, int, bool]) -> Path:
    """The power benchmark's runs, `hog` = (with a CPU hog, its seed, resume); the method record it writes."""
    hogged, seed, resume = hog
    runs_where = Where(
        repo=where.repo, recipes=where.recipes, conf=where.conf, data=where.data, target=where.data / POWER_DIR
    )
    return power_bench(
        repo=where.repo,
        data_dir=where.data,
        where=runs_where,
        runs=runs,
        profile=profile,
        hog_seed=seed if hogged else None,
        resume=resume,
    )


def faults(runs: int, seed: int, max_delay: float, kill: bool, repo: Path) -> None:
    """Signals at random moments of real quick runs, then what they left; an error where anything was left."""
    trials = inject(
        runs=runs, seed=seed, max_delay_s=max_delay, repo=repo, signals=(*SIGNALS, signal.SIGKILL) if kill else SIGNALS
    )
    print_trials(trials)
    if not all(each.clean for each in trials):
        raise BenchError("some interrupted runs left something behind: see the lines marked LEFT")
