"""`invoke recipe`: a session of runs. Every recipe is checked before anything starts; sweeps get their
release environments; what a killed run left is reported (or cleaned); then each recipe runs under the signal
handlers, with its verdicts printed, and the session ends by the exit policy: a subject that failed to start
is an error unless the user keeps going, and a signal after a run was kept says so."""

from __future__ import annotations

import shutil
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from benchsite.commands.kinds import Prepared, RecipeRuns, RunKind, SidesRuns
from benchsite.commands.terminal import print_verdicts, say, say_if_busy
from benchsite.errors import BenchError, InterruptedAfterKeeping
from benchsite.harness.basics.progress import RichReporter
from benchsite.harness.engine.preflight import check_placeable
from benchsite.harness.engine.runner import RunChoices, run_recipe
from benchsite.harness.hosts.placement import Placement, on_this_machine
from benchsite.harness.processes.machine_lock import measuring
from benchsite.harness.processes.signals import checkpoint, signal_for_test, signals_as_interrupt
from benchsite.harness.session.leftovers import clean as clean_leftover
from benchsite.harness.session.leftovers import find_leftovers
from benchsite.harness.session.start import FAILED_AT_START
from benchsite.harness.variants.files import unused_sides
from benchsite.model.conf import Profile
from benchsite.model.hosts import Hosts, parse_hosts
from benchsite.model.machine import naming
from benchsite.model.recipe import Recipe, available_recipes, load_recipe
from benchsite.model.run import RunDocument
from benchsite.results.published import Published
from benchsite.results.store import list_runs, load_run, load_view

__all__ = ["Asked", "RunChoices", "SidesRuns", "Where", "session"]  # what tasks.py asks for


@dataclass(frozen=True)
class Where:
    """The project's folders: the repository, its recipes and confs, the published data, where runs go."""

    repo: Path
    recipes: Path
    conf: Path
    data: Path  # the published data (claims, machine names)
    target: Path  # where new runs go


@dataclass(frozen=True)
class Asked:
    """What the user asked of the session, parsed."""

    name: str
    profile: str
    clean: bool
    hosts: str
    machine: str
    keep_going: bool
    choices: RunChoices
    kind: RunKind = field(default_factory=RecipeRuns)  # a recipe (or sweep) as its profile says, or an A/B run


def _placed(placement: Hosts, repo: Path) -> AbstractContextManager[Placement]:
    """Every role on this machine, or on the hosts given (paramiko, for SSH, is imported for those alone)."""
    if not placement.remote:
        return nullcontext(on_this_machine(repo))
    from benchsite.harness.hosts.remote import placed

    return placed(placement, repo)


def session(asked: Asked, where: Where) -> None:
    """Run every recipe asked for, one after another; see the module's docstring."""
    placement = parse_hosts(asked.hosts)
    names = available_recipes(where.recipes) if asked.name == "all" else [asked.name]
    loaded = [load_recipe(name, where.recipes, where.conf) for name in names]  # all checked first
    profiles = [recipe.profile(asked.profile) for recipe in loaded]
    for recipe, profile in zip(loaded, profiles, strict=True):  # and what they are asked, before waiting
        _checked(recipe, profile, asked.kind, placement)
        asked.kind.refused(recipe, profile, where.repo)
    with measuring(asked.choices.wait_for_quiet, say):  # one benchmark at a time on this machine, from here on
        prepared = [
            asked.kind.prepared(recipe, profile, where.data, where.repo)
            for recipe, profile in zip(loaded, profiles, strict=True)
        ]
        _leftovers(where.target, asked, [each.recipe for each in prepared])
        _measured(prepared, asked, placement, where)


def _measured(prepared: list[Prepared], asked: Asked, placement: Hosts, where: Where) -> None:
    """Each prepared recipe run in turn under the signal handlers, then the exit policy."""
    named = naming(asked.machine, where.conf)
    broken: list[str] = []
    with signals_as_interrupt(), _placed(placement, where.repo) as hosts:  # every host reached before anything starts
        for recipe, claims in ((each.recipe, each.claims) for each in prepared):
            say(f"{recipe.name}: {recipe.title} (profile {asked.profile})")
            before = set(list_runs(where.target / recipe.name))
            try:
                with RichReporter() as reporter:
                    run_dir = run_recipe(
                        recipe=recipe,
                        profile_name=asked.profile,
                        data_dir=where.target,
                        repo_dir=where.repo,
                        reporter=reporter,
                        published=claims,
                        hosts=hosts,
                        named=named,
                        choices=asked.choices,
                    )
                broken += _reported(run_dir, claims, where.repo)
            except KeyboardInterrupt:
                kept = sorted(set(list_runs(where.target / recipe.name)) - before)
                if kept:  # the interrupt came after the run was complete and in place
                    raise InterruptedAfterKeeping(
                        f"interrupted after the run was kept: {shown(kept[-1], where.repo)}"
                    ) from None
                raise
        if broken and not asked.keep_going:  # still under the handlers: a late signal is an interrupt, not a crash
            raise BenchError(
                f"{'; '.join(broken)}; the run is kept with the reason in its row: fix the subject and run "
                "again, or pass --keep-going to accept a run without it"
            )


def _checked(recipe: Recipe, profile: Profile, kind: RunKind, placement: Hosts) -> None:
    """Where a recipe may run: on two hosts only where it can be placed, and never a run of variants (a release
    sweep, an A/B run); a one-line error at once, never after waiting for the machine."""
    if not placement.remote:
        return
    check_placeable(recipe)
    if kind.varies(recipe, profile):
        raise BenchError("a run of variants (a release sweep, an A/B run) runs on one machine: run it without --hosts")


def _leftovers(target: Path, asked: Asked, recipes: list[Recipe]) -> None:
    """What a killed run left under the target folder: removed with --clean, else named with the way to; with
    --clean, the A/B sides under build/variants/ that this session does not run go too."""
    if asked.clean:
        unused = unused_sides(recipes)
        for folder in unused:
            shutil.rmtree(folder, ignore_errors=True)
        if unused:
            say(f"removed {len(unused)} A/B side{'s' if len(unused) > 1 else ''} no run uses from build/variants/")
    for leftover in find_leftovers(target):
        if asked.clean:
            clean_leftover(leftover)
            say(f"removed what a killed run left: {leftover.describe()}")
        else:
            again = asked.kind.again(asked.name)
            say(f"warning: a killed run left {leftover.describe()}: `.venv/bin/invoke {again} --clean` removes it")


def _reported(run_dir: Path, claims: Published | None, repo: Path) -> list[str]:
    """Print what a kept run says (its verdicts, whether the machine was busy, where it is); return the subjects
    whose software is here but failed to start or answer, as the exit policy names them."""
    if claims is not None:
        print_verdicts(run_dir, claims)
    view = load_view(run_dir)
    ab_run = view.run.variants is not None and not view.run.variants.sweep
    if ab_run:
        from benchsite.commands.versus import print_versus

        print_versus(view)
    say_if_busy(view)
    built = "" if ab_run else "; build the site with `.venv/bin/invoke docs`"
    say(f"wrote {shown(run_dir, repo)}{built}")
    signal_for_test("after-wrote")
    run = load_run(run_dir)
    failed = [s for s in run.skipped if s.reason == FAILED_AT_START]
    checkpoint()  # a signal something swallowed on the way (a Popen's clean-up) still counts
    said = [f"{run.recipe}: {s.label} ({s.name}) failed: {' '.join(s.detail.split())}" for s in failed]
    return said + (_sides_that_failed_every_repetition(run) if ab_run else [])


def _sides_that_failed_every_repetition(run: RunDocument) -> list[str]:
    """An A/B run's subjects of which no repetition gave a figure: one side measured nothing to compare."""
    said = []
    for subject in run.subjects:
        repetitions = [rep for cell in subject.cells for rep in cell.repetitions]
        if repetitions and not any(rep.ok for rep in repetitions):
            said.append(
                f"{run.recipe}: {subject.label} ({subject.name}) failed every repetition: {repetitions[-1].error}"
            )
    return said


def shown(path: Path, repo: Path) -> Path:
    """A path as the user reads it: relative to the repository where it is inside it."""
    return path.relative_to(repo) if path.is_relative_to(repo) else path


def list_recipes(recipes: Path, conf: Path, data: Path) -> None:
    """`invoke recipes`: each recipe with its stored runs and title (a broken one says why)."""
    for name in available_recipes(recipes):
        try:
            title = load_recipe(name, recipes, conf).title
        except BenchError as error:
            title = f"BROKEN: {error}"
        runs = list_runs(data / name)
        latest = f"{len(runs)} run(s), latest {runs[-1].name}" if runs else "no run yet"
        print(f"{name:24} {latest:45} {title}")
