"""An A/B run's recipe: each measured subject copied twice, NAME-a and NAME-b, each copy running its side's
variant (see `benchsite.model.variant`). The copies of a subject sit side by side in the recipe, so every
round measures them back to back in each cell, their order turning round every other round (A B, B A).

Files a `dir:` or `rev:` side changes are copied with the rest of the recipe's folder to
build/variants/<side>-<digest>/ (named by what is in them), and the copy's command runs them from there."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.sweep import release_env
from benchsite.model.recipe import AnySubject, Backend, Recipe
from benchsite.model.variant import SIDES, VARIANTS_DIR, Variant, paired_name


def paired_recipe(
    recipe: Recipe,
    profile: str,
    sides: tuple[Variant, Variant],
    chosen: tuple[str, ...],
    repo: Path,
    say: Callable[[str], None],
) -> Recipe:
    """The recipe of an A/B run: the measured subjects (the chosen ones, else those either side changes), each
    as its A and its B copy; the backends others talk to as they are; the profile measuring all of them."""
    measured = _measured(recipe, sides, chosen)
    changes = [_changes(recipe, variant, side, measured, repo, say) for side, variant in zip(SIDES, sides, strict=True)]
    subjects: list[AnySubject] = []
    for subject in recipe.subjects:
        if subject.name in measured:
            for side, variant, change in zip(SIDES, sides, changes, strict=True):
                argv = change(subject)
                label = f"{subject.label} [{side.upper()}: {variant.shown}]"
                subjects.append(
                    subject.model_copy(update={"name": paired_name(subject.name, side), "label": label, "argv": argv})
                )
        elif isinstance(subject, Backend):
            subjects.append(subject)
    profiles = {**recipe.profiles, profile: recipe.profile(profile).model_copy(update={"subjects": ()})}
    return replace(recipe, subjects=tuple(subjects), profiles=profiles)


def _measured(recipe: Recipe, sides: tuple[Variant, Variant], chosen: tuple[str, ...]) -> set[str]:
    names = [s.name for s in recipe.subjects if not isinstance(s, Backend)]
    unknown = [name for name in chosen if name not in names]
    if unknown:
        raise BenchError(f"{recipe.name} has no subject {', '.join(unknown)}: choose among {', '.join(names)}")
    if chosen:
        return set(chosen)
    touched = {
        s.name for s in recipe.subjects if not isinstance(s, Backend) and any(_touches(recipe, v, s) for v in sides)
    }
    if not touched:
        raise BenchError(
            f"neither {sides[0].spec} nor {sides[1].spec} changes a subject of {recipe.name}: "
            "name the subjects to measure with --subjects"
        )
    return touched


def _touches(recipe: Recipe, variant: Variant, subject: AnySubject) -> bool:
    """Whether the variant changes what the subject runs."""
    if variant.kind == "dir":
        return any((Path(variant.value) / name).is_file() for name in subject.source_files)
    if variant.kind == "rev":
        return bool(subject.source_files)
    if variant.kind == "release":
        return recipe.sweep is not None and subject.name in recipe.sweep.subjects
    if variant.kind == "opt":
        flag, _ = variant.option
        return any(token == flag or token.startswith(flag + "=") for token in subject.argv)
    return False


Change = Callable[[AnySubject], tuple[str, ...]]


def _changes(
    recipe: Recipe, variant: Variant, side: str, measured: set[str], repo: Path, say: Callable[[str], None]
) -> Change:
    """How the side's variant changes a measured subject's command line."""
    if variant.kind == "checkout":
        return lambda subject: subject.argv
    if variant.kind == "opt":
        return lambda subject: _with_option(subject.argv, *variant.option)
    if variant.kind == "release":
        if recipe.sweep is None:
            raise BenchError(f"-{side} {variant.spec}: {recipe.name} has no [sweep] in its conf, so no releases to run")
        env = release_env(recipe.sweep, variant.value, recipe.conf_path.parent, say)
        python = f"{{sweep}}/{env.folder}/bin/python"
        return lambda subject: _on_release(subject, python) if subject.name in recipe.sweep.subjects else subject.argv  # type: ignore[union-attr]
    files = _variant_files(recipe, variant, side, measured, repo)
    folder = _materialized(recipe, side, files)
    return lambda subject: _running_from(subject, folder.name, files)


def _with_option(argv: tuple[str, ...], flag: str, value: str) -> tuple[str, ...]:
    """argv with --flag's value replaced, in either form (--flag VALUE, --flag=VALUE)."""
    out = list(argv)
    for index, token in enumerate(out):
        if token.startswith(flag + "="):
            out[index] = f"{flag}={value}"
        elif token == flag and index + 1 < len(out):
            out[index + 1] = value
    return tuple(out)


def _on_release(subject: AnySubject, python: str) -> tuple[str, ...]:
    if subject.argv[0] != "{python}":
        raise BenchError(f"{subject.name} does not run {{python}}, so no release of a package can run it")
    return (python, *subject.argv[1:])


def _variant_files(recipe: Recipe, variant: Variant, side: str, measured: set[str], repo: Path) -> dict[str, bytes]:
    """{source file: its content on this side}, for the measured subjects' source files the side has."""
    names = sorted({name for s in recipe.subjects if s.name in measured for name in s.source_files})
    found: dict[str, bytes] = {}
    for name in names:
        if variant.kind == "dir":
            path = Path(variant.value) / name
            if path.is_file():
                found[name] = path.read_bytes()
        else:
            found[name] = _at_revision(repo, variant.value, recipe.directory.relative_to(repo) / name, side)
    if not found:
        raise BenchError(
            f"-{side} {variant.spec} holds none of the files the subjects run ({', '.join(names)}): "
            "give the folder that holds the changed ones"
        )
    return found


def _at_revision(repo: Path, revision: str, path: Path, side: str) -> bytes:
    result = subprocess.run(["git", "-C", str(repo), "show", f"{revision}:{path.as_posix()}"], capture_output=True)
    if result.returncode != 0:
        said = result.stderr.decode(errors="replace").strip().splitlines()
        raise BenchError(f"-{side} rev:{revision}: git has no {path} there ({said[-1] if said else 'no message'})")
    return result.stdout


def _materialized(recipe: Recipe, side: str, files: dict[str, bytes]) -> Path:
    """build/variants/<side>-<digest>/: the recipe's folder with the side's files in place (made once)."""
    digest = hashlib.sha256()
    for name, content in sorted(files.items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(content).digest())
    folder = VARIANTS_DIR / f"{side}-{digest.hexdigest()[:12]}"
    if folder.is_dir():
        return folder
    staging = folder.with_name(f".{folder.name}.staging")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(recipe.directory, staging, ignore=shutil.ignore_patterns("__pycache__"))
    for name, content in files.items():
        (staging / name).write_bytes(content)
    staging.rename(folder)  # whole or not at all
    return folder


def _running_from(subject: AnySubject, folder: str, files: dict[str, bytes]) -> tuple[str, ...]:
    """The command with each of the side's files it names run from the side's folder."""
    changed = [name for name in subject.source_files if name in files]
    if not changed:
        return subject.argv
    argv = tuple(f"{{variants}}/{folder}/{token}" if token in files else token for token in subject.argv)
    if argv == subject.argv:
        raise BenchError(
            f"{subject.name} loads {', '.join(changed)} by module name, not by path: an A/B run of changed files "
            "needs a subject that runs them by path"
        )
    return argv
