"""The runs the method's own benchmarks make (`invoke powerbench`, `invoke hogbench`), each through the same
session as `invoke versus` and `invoke recipe`: machine name, quiet check, leftovers, exit policy."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from benchsite.commands.recipe import Asked, Where, session
from benchsite.errors import BenchError
from benchsite.harness.engine.runner import RunChoices
from benchsite.harness.experiments.hogbench import RecipeRun
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
            sides=sides,
            subjects=(POWER_SUBJECT,),
            aa=True,
        )
        made = stored_run(asked, where)
        say(f"{made.name}: A = {unchanged.name}, B = {folder.name}")
        return made

    return run


def recipe_runs(where: Where, recipe: str, profile: str) -> RecipeRun:
    """Runs of a recipe, waiting for a quiet machine first or not (--no-wait)."""
    return lambda wait: stored_run(Asked(recipe, profile, False, "", "", False, RunChoices(wait_for_quiet=wait)), where)


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
        power_runs(repo, runs, versus_runs(where, profile, print), keep, print, hog, resumed)
    return record
