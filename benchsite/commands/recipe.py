"""`invoke recipe`: a session of runs. Every recipe is checked before anything starts; sweeps get their
release environments; what a killed run left is reported (or cleaned); then each recipe runs under the signal
handlers, with its verdicts printed, and the session ends by the exit policy: a subject that failed to start
is an error unless the user keeps going, and a signal after a run was kept says so."""

from __future__ import annotations

import shutil
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

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
from benchsite.harness.variants.copies import releases, sides, with_variants
from benchsite.harness.variants.files import unused_sides
from benchsite.harness.variants.precheck import checked_sides
from benchsite.model.conf import Profile
from benchsite.model.hosts import Hosts, parse_hosts
from benchsite.model.machine import naming
from benchsite.model.recipe import Recipe, available_recipes, load_recipe
from benchsite.model.variant import SIDES, parse_variant
from benchsite.results.published import Published, published_claims
from benchsite.results.store import list_runs, load_run, load_view

__all__ = ["Asked", "RunChoices", "Where", "session"]  # what tasks.py asks for, RunChoices among them


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
    sides: tuple[str, str] | None = None  # an A/B run (`invoke versus`): its variants A and B, as given
    subjects: tuple[str, ...] = ()  # an A/B run's subjects (empty: those either side changes)
    aa: bool = False  # an A/B run whose sides run the same thing, asked for (`invoke versus --aa`)


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
    for recipe in loaded:  # and what they are asked, before waiting for the machine
        _checked(recipe, asked, placement, where)
    with measuring(asked.choices.wait_for_quiet, say):  # one benchmark at a time on this machine, from here on
        prepared = [_prepared(each, asked, placement, where) for each in loaded]
        _leftovers(where.target, asked, [recipe for recipe, _ in prepared])
        _measured(prepared, asked, placement, where)


def _measured(prepared: list[tuple[Recipe, Published | None]], asked: Asked, placement: Hosts, where: Where) -> None:
    """Each prepared recipe run in turn under the signal handlers, then the exit policy."""
    named = naming(asked.machine, where.conf)
    broken: list[str] = []
    with signals_as_interrupt(), _placed(placement, where.repo) as hosts:  # every host reached before anything starts
        for recipe, claims in prepared:
            say(f"{recipe.name}: {recipe.title} (profile {asked.profile})")
            before = set(list_runs(where.target / recipe.name))
            try:
                with RichReporter() as reporter:
                    run_dir = run_recipe(
                        recipe, asked.profile, where.target, where.repo, reporter, claims, hosts, named, asked.choices
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


def _checked(recipe: Recipe, asked: Asked, placement: Hosts, where: Where) -> None:
    """Everything asked of a recipe that reads no measurement: its profile, where it may run, an A/B run's sides
    (harness/variants/precheck.py); a one-line error at once, never after waiting for the machine."""
    chosen = recipe.profile(asked.profile)
    sweep = recipe.sweep_of(chosen)
    if chosen.further_rounds_by == "comparisons" and sweep is None and asked.sides is None:
        raise BenchError(
            f"profile {asked.profile!r} of {recipe.name} is sequential: it stops once its comparisons of copies are "
            "decided, so it runs under `invoke versus` or as a release sweep (give it sweep = PACKAGE)"
        )
    if asked.sides is not None and (unhonoured := _not_an_ab_profile(chosen, sweep is not None)):
        raise BenchError(
            f"profile {asked.profile!r} of {recipe.name} {unhonoured}, which an A/B run cannot honour: give "
            "`invoke versus` an A/B profile (versus, versus-fixed, or one of your own without those)"
        )
    if placement.remote:
        check_placeable(recipe)
    if (sweep is not None or asked.sides) and placement.remote:
        raise BenchError("a run of variants (a release sweep, an A/B run) runs on one machine: run it without --hosts")
    if asked.sides is not None:
        checked_sides(recipe, asked.sides, asked.subjects, where.repo, asked.aa)


def _not_an_ab_profile(profile: Profile, sweeps: bool) -> str:
    """What of a profile an A/B run cannot honour, in words ("" where it can): a sweep's releases, a page's
    latency profile, further rounds that follow a page's claims (an A/B run has none)."""
    if sweeps:
        return "sweeps releases"
    if profile.latency is not None:
        return "measures a page's latency profile"
    if profile.further_rounds_by == "claims":
        return "takes further rounds by a page's claims"
    return ""


def _prepared(recipe: Recipe, asked: Asked, placement: Hosts, where: Where) -> tuple[Recipe, Published | None]:
    """A recipe ready to run, with its published claims: an A/B run's or a release sweep's copies of its
    subjects, each running its variant (a release in its environment of its time, made here where missing)."""
    profile = asked.profile
    chosen = recipe.profile(profile)
    claims = published_claims(recipe, where.data)
    sweep = recipe.sweep_of(chosen)
    if asked.sides is not None:
        a, b = (parse_variant(given, side) for given, side in zip(asked.sides, SIDES, strict=True))
        recipe = with_variants(recipe, profile, sides(a, b), asked.subjects, where.repo, say)
        say(f"{recipe.name}: A = {a.shown}, B = {b.shown} (profile {profile}), measured in one run")
        return recipe, None
    if sweep is None:
        return recipe, claims
    chosen_subjects = tuple(s for s in sweep.subjects if not chosen.subjects or s in chosen.subjects)
    recipe = with_variants(recipe, profile, releases(sweep, chosen.releases), chosen_subjects, where.repo, say)
    if claims is None or recipe.variants is None:
        return recipe, claims
    return recipe, claims.for_copies({v.name: dict(v.copies) for v in recipe.variants.variants})


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
            again = f"versus {asked.name} -b ..." if asked.sides else f"recipe {asked.name}"
            say(f"warning: a killed run left {leftover.describe()}: `.venv/bin/invoke {again} --clean` removes it")


def _reported(run_dir: Path, claims: Published | None, repo: Path) -> list[str]:
    """Print what a kept run says (its verdicts, whether the machine was busy, where it is); return the subjects
    whose software is here but failed to start or answer, as the exit policy names them."""
    if claims is not None:
        print_verdicts(run_dir, claims)
    view = load_view(run_dir)
    if view.run.variants is not None and not view.run.variants.sweep:
        from benchsite.commands.versus import print_versus

        print_versus(view)
    say_if_busy(view)
    built = "" if view.run.variants and not view.run.variants.sweep else "; build the site with `.venv/bin/invoke docs`"
    say(f"wrote {shown(run_dir, repo)}{built}")
    signal_for_test("after-wrote")
    run = load_run(run_dir)
    failed = [s for s in run.skipped if s.reason == FAILED_AT_START]
    checkpoint()  # a signal something swallowed on the way (a Popen's clean-up) still counts
    return [f"{run.recipe}: {s.label} ({s.name}) failed: {' '.join(s.detail.split())}" for s in failed]


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
