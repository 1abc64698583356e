"""An A/B run's sides judged before the machine's lock is taken: everything that reads no measurement (the
spec's form, a `dir:` folder's files, a revision's, pins no measured subject runs, subjects either side
changes) and whether the two sides would run the same thing, which makes an A/B run an A/A run. A wrong side
is said at once, not after waiting for another benchmark; only making environments and measuring wait."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.variants.copies import (
    Named,
    changed_subjects,
    pinned_versions,
    runs,
    sides,
    unusable_pins,
    with_option,
)
from benchsite.harness.variants.envs import upload_time
from benchsite.harness.variants.files import checkout_files, file_digests, variant_files
from benchsite.harness.variants.sources import commit, repository
from benchsite.model.recipe import Recipe
from benchsite.model.variant import SIDES, Variant, canonical, parse_variant


@dataclass(frozen=True)
class WhatRuns:
    """What a side's measured subjects would run: their source files' digests, their distributions' versions
    (and whether those come with the dependencies of their day), their command lines."""

    files: tuple[tuple[str, str], ...]
    versions: tuple[tuple[str, str], ...]
    of_its_time: bool
    argv: tuple[tuple[str, ...], ...]


def checked_sides(
    recipe: Recipe, given: tuple[str, str], chosen: tuple[str, ...], repo: Path, aa: bool
) -> tuple[Variant, Variant]:
    """Both sides parsed and checked against the recipe and this checkout; two sides that run the same thing
    are refused unless `aa` (an A/A run asked for)."""
    a, b = (parse_variant(spec, side) for spec, side in zip(given, SIDES, strict=True))
    named = sides(a, b)
    measured = changed_subjects(recipe, named, chosen)
    each = [what_runs(recipe, side, measured, repo) for side in named]
    if each[0] == each[1] and not aa:
        raise BenchError(
            f"B ({b.shown}) runs the same as A ({a.shown}) for {', '.join(sorted(measured))}: an A/A run; "
            "pass --aa to measure it anyway"
        )
    return a, b


def what_runs(recipe: Recipe, named: Named, measured: set[str], repo: Path) -> WhatRuns:
    """What one side would run, read from files and installed metadata alone."""
    variant = named.variant
    subjects = [s for s in recipe.subjects if s.name in measured]
    files = checkout_files(recipe, measured)
    versions: dict[str, str] = {}
    for subject in subjects:
        versions |= runs(recipe, subject)
    argv = tuple(s.argv for s in subjects)
    if variant.kind in ("dir", "rev"):
        files |= variant_files(recipe, variant, named.name, measured=measured, repo=repo)
    elif variant.kind == "pins":
        unusable_pins(recipe, variant, versions)
        versions |= {canonical(name): version for name, version in variant.pins.items()}
    elif variant.kind == "opt":
        argv = tuple(with_option(*variant.option, s) for s in subjects)
    elif variant.kind == "source":  # the repository and its revision are there (the build comes with the run)
        source = variant.source
        if source.how == "git":
            shown = source.where if source.is_url else Path(source.where).name
            made = commit(repository(source), source.revision, shown).id
        else:
            made = f"dir:{source.where}"
        versions[canonical(source.distribution)] = made
    elif variant.kind == "release":  # the dependencies of its day: another set than the checkout's, whatever the pins
        versions = {canonical(name): version for name, version in pinned_versions(recipe, variant).items()}
        for name, version in versions.items():
            upload_time(name, version)  # the registry has it (asked once, kept), or a one-line error now
    return WhatRuns(
        files=tuple(file_digests(files).items()),
        versions=tuple(sorted(versions.items())),
        of_its_time=variant.kind == "release",
        argv=argv,
    )
