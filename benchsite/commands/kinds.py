"""What a session's runs measure, asked once: a recipe as its profile says (its subjects, or the copies of a
release sweep), or an A/B run's two sides (`invoke versus`). The session asks its kind what to refuse before
anything starts and how to prepare each recipe; it knows nothing of sides or releases itself."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from benchsite.commands.terminal import say
from benchsite.errors import BenchError
from benchsite.harness.variants.copies import releases, sides, with_variants
from benchsite.harness.variants.precheck import checked_sides
from benchsite.model.conf import Profile
from benchsite.model.recipe import Recipe
from benchsite.model.variant import SIDES, parse_variant
from benchsite.results.published import Published, published_claims


@dataclass(frozen=True)
class Prepared:
    """A recipe ready to run (its copies made where it has variants), with the published claims it decides."""

    recipe: Recipe
    claims: Published | None


class RecipeRuns:
    """`invoke recipe`: each recipe's subjects as its profile asks, or a release sweep's copies of them."""

    def refused(self, recipe: Recipe, profile: Profile, repo: Path) -> None:
        """A one-line error for what this kind of run cannot do with the profile."""
        if profile.further_rounds_by == "comparisons" and recipe.sweep_of(profile) is None:
            raise BenchError(
                f"profile {profile.name!r} of {recipe.name} is sequential: it stops once its comparisons of copies "
                "are decided, so it runs under `invoke versus` or as a release sweep (give it sweep = PACKAGE)"
            )

    def varies(self, recipe: Recipe, profile: Profile) -> bool:
        """Whether the run measures variants (a release sweep here), which run on one machine."""
        return recipe.sweep_of(profile) is not None

    def prepared(self, recipe: Recipe, profile: Profile, data: Path, repo: Path) -> Prepared:
        """The recipe with a sweep's copies of its subjects (each release in its environment of its time, made
        here where missing), and its published claims (a sweep's: for each release's copies)."""
        claims = published_claims(recipe, data)
        sweep = recipe.sweep_of(profile)
        if sweep is None:
            return Prepared(recipe, claims)
        chosen = tuple(s for s in sweep.subjects if not profile.subjects or s in profile.subjects)
        recipe = with_variants(
            recipe=recipe,
            profile=profile.name,
            variants=releases(sweep, profile.releases),
            chosen=chosen,
            repo=repo,
            say=say,
        )
        if claims is None or recipe.variants is None:
            return Prepared(recipe, claims)
        return Prepared(recipe, claims.for_copies({v.name: dict(v.copies) for v in recipe.variants.variants}))

    def again(self, name: str) -> str:
        """The command that runs it again."""
        return f"recipe {name}"


@dataclass(frozen=True)
class SidesRuns:
    """`invoke versus`: two variants of a recipe's subjects, A and B as given, measured in one run."""

    sides: tuple[str, str]
    subjects: tuple[str, ...] = ()  # the subjects compared (empty: those either side changes)
    aa: bool = False  # both sides run the same thing, asked for (`invoke versus --aa`)
    cells: tuple[str, ...] = ()  # the cells measured (empty: the profile's)

    def refused(self, recipe: Recipe, profile: Profile, repo: Path) -> None:
        if unhonoured := _not_an_ab_profile(recipe, profile):
            raise BenchError(
                f"profile {profile.name!r} of {recipe.name} {unhonoured}, which an A/B run cannot honour: give "
                "`invoke versus` an A/B profile (versus, versus-fixed, or one of your own without those)"
            )
        checked_sides(recipe=recipe, given=self.sides, chosen=self.subjects, repo=repo, aa=self.aa)

    def varies(self, recipe: Recipe, profile: Profile) -> bool:
        return True

    def prepared(self, recipe: Recipe, profile: Profile, data: Path, repo: Path) -> Prepared:
        """The recipe with a copy of each compared subject per side (an A/B run decides no published claim)."""
        a, b = (parse_variant(given, side) for given, side in zip(self.sides, SIDES, strict=True))
        recipe = with_variants(
            recipe=recipe, profile=profile.name, variants=sides(a, b), chosen=self.subjects, repo=repo, say=say
        )
        if self.cells:
            narrowed = recipe.profile(profile.name).model_copy(update={"cells": self.cells})
            recipe = replace(recipe, profiles={**recipe.profiles, profile.name: narrowed})
        say(f"{recipe.name}: A = {a.shown}, B = {b.shown} (profile {profile.name}), measured in one run")
        return Prepared(recipe, None)

    def again(self, name: str) -> str:
        return f"versus {name} -b ..."


RunKind = RecipeRuns | SidesRuns


def _not_an_ab_profile(recipe: Recipe, profile: Profile) -> str:
    """What of a profile an A/B run cannot honour, in words ("" where it can): a sweep's releases, a page's
    latency profile, further rounds that follow a page's claims (an A/B run has none)."""
    if recipe.sweep_of(profile) is not None:
        return "sweeps releases"
    if profile.latency is not None:
        return "measures a page's latency profile"
    if profile.further_rounds_by == "claims":
        return "takes further rounds by a page's claims"
    return ""
