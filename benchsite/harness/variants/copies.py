"""A run of variants: the recipe with each measured subject copied once per variant (NAME-a and NAME-b for an
A/B run, NAME-3_2_4 per release of a sweep), each copy running its variant, side by side in the recipe so that
every round measures them back to back in each cell. What each variant is and ran goes into the run's record
(recipe.variants, then run.json), where pages, compare and versus read it."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.builds.byo import sha256_of
from benchsite.harness.variants.envs import closure, of_its_time, package_envs, subject_distributions
from benchsite.harness.variants.files import (
    checkout_files,
    file_digests,
    materialized,
    running_from,
    variant_files,
)
from benchsite.harness.variants.sources import SOURCES_DIR, built
from benchsite.model.conf import Sweep
from benchsite.model.recipe import AnySubject, Backend, Recipe
from benchsite.model.sweep import EnvWanted, PackageEnv, release_slug
from benchsite.model.variant import SIDES, SourceRecord, Variant, VariantRecord, VariantSet, canonical, copy_name

Say = Callable[[str], None]
Change = Callable[[AnySubject], tuple[str, ...]]


@dataclass(frozen=True)
class Named:
    """A variant with the name its copies carry ("a", "3_2_4") and how their labels read: a pattern of {label}
    (the subject's), per subject where the conf gives one."""

    name: str
    variant: Variant
    label: str
    labels: dict[str, str] = field(default_factory=dict)

    def label_of(self, subject: AnySubject) -> str:
        return self.labels.get(subject.name, self.label).format(label=subject.label)


@dataclass(frozen=True)
class Ran:
    """What a variant's record says it ran (see VariantRecord)."""

    installed: tuple[str, ...] = ()
    resolved_as_of: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    source: SourceRecord | None = None


def sides(a: Variant, b: Variant) -> list[Named]:
    """An A/B run's two variants."""
    return [Named(side, v, f"{{label}} [{side.upper()}: {v.shown}]") for side, v in zip(SIDES, (a, b), strict=True)]


def releases(sweep: Sweep, versions: Sequence[str]) -> list[Named]:
    """A release sweep's variants: each release of the sweep's package, of its time."""
    found = []
    for version in versions:
        known = {"package": sweep.package, "release": version, "label": "{label}"}
        labels = {subject: pattern.format(**known) for subject, pattern in sweep.labels.items()}
        variant = Variant("release", f"{sweep.package}=={version}")
        found.append(Named(release_slug(version), variant, f"{{label}}, {sweep.package} {version}", labels))
    return found


def with_variants(
    recipe: Recipe,
    profile: str,
    variants: list[Named],
    chosen: tuple[str, ...],
    repo: Path,
    say: Say,
) -> Recipe:
    """The recipe of a run of variants: the measured subjects (the chosen ones, else those any variant changes),
    each copied once per variant; the backends others talk to as they are; the profile measuring all of them."""
    measured = changed_subjects(recipe, variants, chosen)
    changes = _changes(recipe, variants, measured, repo=repo, say=say)
    subjects: list[AnySubject] = []
    records = []
    for named, (_, fields) in zip(variants, changes, strict=True):
        copies = {s.name: copy_name(s.name, named.name) for s in recipe.subjects if s.name in measured}
        records.append(
            VariantRecord(
                name=named.name,
                kind=named.variant.kind,
                spec=named.variant.shown,
                copies=copies,
                installed=fields.installed,
                resolved_as_of=fields.resolved_as_of,
                files=fields.files,
                source=fields.source,
            )
        )
    for subject in recipe.subjects:
        if subject.name in measured:
            for named, (change, _) in zip(variants, changes, strict=True):
                update = {
                    "name": copy_name(subject.name, named.name),
                    "label": named.label_of(subject),
                    "argv": change(subject),
                }
                subjects.append(subject.model_copy(update=update))
        elif isinstance(subject, Backend):
            subjects.append(subject)
    profiles = {**recipe.profiles, profile: recipe.profile(profile).model_copy(update={"subjects": ()})}
    package = recipe.sweep_of(recipe.profile(profile))
    # the reference: a sweep's newest release (its last), an A/B run's side a (its first)
    reference = records[-1].name if package else records[0].name
    found = VariantSet(reference=reference, package=package.package if package else None, variants=tuple(records))
    return replace(recipe, subjects=tuple(subjects), profiles=profiles, variants=found)


def changed_subjects(recipe: Recipe, variants: list[Named], chosen: tuple[str, ...]) -> set[str]:
    names = [s.name for s in recipe.subjects if not isinstance(s, Backend)]
    unknown = [name for name in chosen if name not in names]
    if unknown:
        raise BenchError(f"{recipe.name} has no subject {', '.join(unknown)}: choose among {', '.join(names)}")
    if chosen:
        return set(chosen)
    touched = {
        s.name
        for s in recipe.subjects
        if not isinstance(s, Backend) and any(_touches(recipe, n.variant, s) for n in variants)
    }
    if not touched:
        specs = " nor ".join(n.variant.spec for n in variants)
        raise BenchError(f"neither {specs} changes a subject of {recipe.name}: name the subjects with --subjects")
    return touched


def _touches(recipe: Recipe, variant: Variant, subject: AnySubject) -> bool:
    """Whether the variant changes what the subject runs."""
    if variant.kind == "dir":  # a file the folder holds changes the subject only where it differs from the checkout's
        return any(_differs(Path(variant.value) / name, recipe.directory / name) for name in subject.source_files)
    if variant.kind == "rev":
        return bool(subject.source_files)
    if variant.kind in ("pins", "release"):
        pinned = {canonical(name) for name in pinned_versions(recipe, variant)}
        return bool(pinned & runs(recipe, subject).keys())
    if variant.kind == "source":
        return canonical(variant.source.distribution) in runs(recipe, subject)
    if variant.kind == "opt":
        flag, _ = variant.option
        return any(token == flag or token.startswith(flag + "=") for token in subject.argv)
    return False


def _differs(given: Path, own: Path) -> bool:
    """Whether a side's file is another than the checkout's: present, and a link (refused later), or other bytes."""
    if not os.path.lexists(given):
        return False
    if given.is_symlink() or not given.is_file() or not own.is_file():
        return True
    return given.stat().st_size != own.stat().st_size or given.read_bytes() != own.read_bytes()


def runs(recipe: Recipe, subject: AnySubject) -> dict[str, str]:
    """The distributions a subject runs and all they need, as this checkout has them."""
    return closure(subject_distributions(recipe, subject)) if subject.argv[0] == "{python}" else {}


def pinned_versions(recipe: Recipe, variant: Variant) -> dict[str, str]:
    """{distribution: version} of a package variant (release:VERSION: the recipe's swept package's)."""
    if variant.kind == "release" and "==" not in variant.value:
        sweep = recipe.main_sweep
        if sweep is None:
            raise BenchError(f"{variant.spec}: {recipe.name} has no [sweeps.PACKAGE] in its conf: give NAME==VERSION")
        return {sweep.package: variant.value}
    return Variant("pins", variant.value).pins


def _changes(
    recipe: Recipe, variants: list[Named], measured: set[str], *, repo: Path, say: Say
) -> list[tuple[Change, Ran]]:
    """How each variant changes a measured subject's command line, and what its record says it ran."""
    envs = _package_envs(recipe, [n.variant for n in variants], measured, say)
    # Beside a folder or a revision, the checkout runs from a copy too, in a folder named as long as the other's
    # (build/variants/a-<digest>/ beside b-<digest>/): a path's length alone moved the framework's instructions
    # per request by 0.1-0.2 % (data/method/power-path.toml), which an A/B run would call a change.
    files_beside = any(n.variant.kind in ("dir", "rev") for n in variants)
    found: list[tuple[Change, Ran]] = []
    for named in variants:
        variant = named.variant
        if variant.kind == "checkout":
            ran = {n: v for s in recipe.subjects if s.name in measured for n, v in runs(recipe, s).items()}
            installed = tuple(f"{n}=={v}" for n, v in sorted(ran.items()))
            if files_beside:
                files = checkout_files(recipe, measured)
                folder = materialized(recipe, named.name, files)
                change = partial(running_from, folder=folder.name, files=files)
                found.append((change, Ran(installed=installed, files=file_digests(files))))
            else:
                found.append((_as_it_is, Ran(installed=installed)))
        elif variant.kind == "opt":
            found.append((partial(with_option, *variant.option), Ran()))
        elif variant.kind in ("pins", "release", "source"):
            env, source = envs[variant]
            change = partial(_on_python, f"{{sweep}}/{env.folder}/bin/python")
            made = Ran(installed=env.installed, resolved_as_of=env.wanted.resolved_as_of, source=source)
            found.append((change, made))
        else:
            files = variant_files(recipe, variant, named.name, measured=measured, repo=repo)
            folder = materialized(recipe, named.name, files)
            found.append((partial(running_from, folder=folder.name, files=files), Ran(files=file_digests(files))))
    return found


def _as_it_is(subject: AnySubject) -> tuple[str, ...]:
    return subject.argv


def _on_python(python: str, subject: AnySubject) -> tuple[str, ...]:
    """The command run by the variant's interpreter where it runs the checkout's."""
    return (python, *subject.argv[1:]) if subject.argv[0] == "{python}" else subject.argv


def _package_envs(
    recipe: Recipe, variants: list[Variant], measured: set[str], say: Say
) -> dict[Variant, tuple[PackageEnv, SourceRecord | None]]:
    """The environment of every package variant, made side by side where missing, with the build of a source
    variant's distribution (made first, once per commit)."""
    builds: dict[Variant, tuple[SourceRecord, Path]] = {}
    for variant in variants:
        if variant.kind == "source":
            say(f"building {variant.source.shown} from its source (once per commit)")
            builds[variant] = built(variant.source)
    wanted = {
        v: _wanted(recipe, v, measured, builds.get(v)) for v in variants if v.kind in ("pins", "release", "source")
    }
    made = package_envs(list(wanted.values()), recipe.conf_path.parent, say)
    return {v: (env, builds[v][0] if v in builds else None) for v, env in zip(wanted, made, strict=True)}


def _wanted(
    recipe: Recipe, variant: Variant, measured: set[str], build: tuple[SourceRecord, Path] | None = None
) -> EnvWanted:
    """A package variant's environment: a release of its time, or the pins (or a build from source) beside the
    checkout's versions of everything else the measured subjects run. A pin of a distribution none of them runs
    is an error."""
    pins = {build[0].distribution: build[0].version} if build else pinned_versions(recipe, variant)
    pinned = {canonical(name): version for name, version in pins.items()}
    subjects = [s for s in recipe.subjects if s.name in measured]
    ran: dict[str, str] = {}
    for subject in subjects:
        ran |= runs(recipe, subject)
    if variant.kind == "pins":
        unusable_pins(recipe, variant, ran)
    sweeps = [sweep for sweep in recipe.sweeps.values() if canonical(sweep.package) in pinned]
    patch = next(
        (s.patches[pinned[canonical(s.package)]] for s in sweeps if pinned[canonical(s.package)] in s.patches), None
    )
    if build is not None:
        patch = None  # a sweep's patches are for its releases' files
    if patch is not None and not (recipe.conf_path.parent / patch).is_file():
        raise BenchError(
            f"{recipe.conf_path}: sweeps names the patch {patch}, which is not there: add it or fix the name"
        )
    of_time = variant.kind == "release"
    beside = sorted({p for s in subjects for p in subject_distributions(recipe, s) if canonical(p) not in pinned})
    record, wheel = build if build else (None, None)
    return EnvWanted(
        pins=pins,
        beside=() if of_time else tuple(beside),
        resolved_as_of=of_its_time(pins) if of_time else None,
        constraints=() if of_time else tuple(f"{n}=={v}" for n, v in sorted(ran.items()) if n not in pinned),
        patch=patch,
        patch_sha256=sha256_of(recipe.conf_path.parent / patch) if patch else None,
        wheels={record.distribution: str(wheel.relative_to(SOURCES_DIR))} if record and wheel else {},
        wheels_sha256={record.distribution: record.wheel_sha256} if record else {},
    )


def unusable_pins(recipe: Recipe, variant: Variant, ran: dict[str, str]) -> None:
    """A one-line error where the variant pins a distribution none of the measured subjects runs (`ran`: what
    they run, {canonical name: version})."""
    unknown = [name for name in variant.pins if canonical(name) not in ran]
    if unknown:
        known = ", ".join(sorted(ran)) or "none: they do not run {python}"
        raise BenchError(
            f"{variant.spec}: no measured subject of {recipe.name} runs {', '.join(unknown)}: they run {known}"
        )


def with_option(flag: str, value: str, subject: AnySubject) -> tuple[str, ...]:
    """The command with --flag's value replaced, in either form (--flag VALUE, --flag=VALUE)."""
    out = list(subject.argv)
    for index, token in enumerate(out):
        if token.startswith(flag + "="):
            out[index] = f"{flag}={value}"
        elif token == flag and index + 1 < len(out):
            out[index + 1] = value
    return tuple(out)


def release_environments(recipe: Recipe, profile: str, say: Say) -> list[PackageEnv]:
    """The environment of every release a sweep profile names, made where missing (`invoke sweep-envs`)."""
    chosen = recipe.profile(profile)
    sweep = recipe.sweep_of(chosen)
    if sweep is None:
        raise BenchError(f"profile {profile!r} of {recipe.name} sweeps no releases: see its conf's [sweeps.PACKAGE]")
    envs = _package_envs(recipe, [n.variant for n in releases(sweep, chosen.releases)], set(sweep.subjects), say)
    return [env for env, _ in envs.values()]
