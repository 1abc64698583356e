"""The source files a `dir:` or `rev:` variant changes: read (a folder's regular files only, none over 1 MiB,
no link, device or FIFO), copied with the rest of the recipe's folder to build/variants/<name>-<digest>/ (named
by what is in them), and run from there."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.model.recipe import AnySubject, Recipe
from benchsite.model.variant import VARIANTS_DIR, Variant

MAX_FILE_BYTES = 1 << 20  # a changed source file is code, not data


def variant_files(recipe: Recipe, variant: Variant, side: str, *, measured: set[str], repo: Path) -> dict[str, bytes]:
    """{source file: its content in the variant}, for the measured subjects' source files the variant has."""
    names = sorted({name for s in recipe.subjects if s.name in measured for name in s.source_files})
    found: dict[str, bytes] = {}
    for name in names:
        if variant.kind == "dir":
            content = _regular_file(Path(variant.value), name, side)
            if content is not None:
                found[name] = content
        else:
            found[name] = _at_revision(repo, variant.value, recipe.directory.relative_to(repo) / name, side)
    if not found:
        raise BenchError(
            f"-{side} {variant.spec} holds none of the files the subjects run ({', '.join(names)}): "
            "give the folder that holds the changed ones"
        )
    return found


def checkout_files(recipe: Recipe, measured: set[str]) -> dict[str, bytes]:
    """{source file: its content in the checkout}, for the measured subjects' source files: a checkout side run
    from a copy, as the side beside it runs."""
    names = sorted({name for s in recipe.subjects if s.name in measured for name in s.source_files})
    return {name: (recipe.directory / name).read_bytes() for name in names}


def _regular_file(folder: Path, name: str, side: str) -> bytes | None:
    """The file's content if the folder has it as a regular file of its own (None: it has no such name); a
    link, device, FIFO, folder or oversize file is a one-line error, and nothing is followed or read first."""
    path = folder / name
    try:
        # O_NOFOLLOW: a link is refused by the kernel, not by a check that could race with a swap
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        what = "a symbolic link" if path.is_symlink() else error.strerror
        raise BenchError(f"-{side} dir: {path} is {what}: give a folder holding the changed files themselves") from None
    mode = os.fstat(descriptor)
    if not stat.S_ISREG(mode.st_mode):
        os.close(descriptor)
        raise BenchError(f"-{side} dir: {path} is not a regular file: give a folder holding the changed files")
    with os.fdopen(descriptor, "rb") as file:
        if mode.st_size > MAX_FILE_BYTES:
            raise BenchError(
                f"-{side} dir: {path} has {mode.st_size:,} bytes, over the {MAX_FILE_BYTES:,} a source file may have"
            )
        content = file.read(MAX_FILE_BYTES + 1)
    if len(content) > MAX_FILE_BYTES:
        raise BenchError(f"-{side} dir: {path} grew past {MAX_FILE_BYTES:,} bytes while read: give a settled folder")
    return content


def _at_revision(repo: Path, revision: str, path: Path, side: str) -> bytes:
    result = subprocess.run(["git", "-C", str(repo), "show", f"{revision}:{path.as_posix()}"], capture_output=True)
    if result.returncode != 0:
        said = result.stderr.decode(errors="replace").strip().splitlines()
        raise BenchError(f"-{side} rev:{revision}: git has no {path} there ({said[-1] if said else 'no message'})")
    return result.stdout


def file_digests(files: dict[str, bytes]) -> dict[str, str]:
    """{file: sha256 of its content}, as the run records a variant's files."""
    return {name: hashlib.sha256(content).hexdigest() for name, content in sorted(files.items())}


def materialized(recipe: Recipe, side: str, files: dict[str, bytes]) -> Path:
    """build/variants/<side>-<digest>/: the recipe's folder with the variant's files in place (made once)."""
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


def running_from(subject: AnySubject, *, folder: str, files: dict[str, bytes]) -> tuple[str, ...]:
    """The command with each of the variant's files it names run from the variant's folder."""
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


def unused_sides(recipes: list[Recipe]) -> list[Path]:
    """The folders under build/variants/ from which none of these recipes' subjects runs (half-made ones too)."""
    if not VARIANTS_DIR.is_dir():
        return []
    used = {
        token.split("/")[1]
        for recipe in recipes
        for subject in recipe.subjects
        for token in subject.argv
        if token.startswith("{variants}/")
    }
    return sorted(path for path in VARIANTS_DIR.iterdir() if path.name not in used)
