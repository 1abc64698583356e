"""Where each subject's software came from: package, file, checksum, and the byo build behind it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from benchsite.harness.basics.imports import imported, providers
from benchsite.harness.builds.byo import portable_path, read_builds, sha256_of
from benchsite.harness.variants.envs import recorded_env
from benchsite.model.byo import ByoBuild
from benchsite.model.recipe import AnySubject, fill_placeholders
from benchsite.model.run import Origin

NO_DISTRIBUTION = "no installed distribution (the standard library or a bare file)"


def _program_version(path: Path) -> str:
    """The Debian package that owns a program, or the program's own version line."""
    owner = subprocess.run(["dpkg-query", "-S", str(path.resolve())], capture_output=True, text=True)
    if owner.returncode == 0 and ":" in owner.stdout:
        package = owner.stdout.split(":", 1)[0].strip()
        version = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True
        ).stdout.strip()
        return f"Debian package {package} {version}"
    with tempfile.TemporaryDirectory(prefix="benchsite-version-") as scratch:  # what it makes there goes too
        for flag in ("--version", "-V", "-v"):
            try:
                result = subprocess.run(
                    [str(path), flag],
                    capture_output=True,
                    text=True,
                    timeout=10,
                    env={**os.environ, "TMPDIR": scratch},  # Cherokee makes a temporary folder at every start
                )
            except (OSError, subprocess.TimeoutExpired):
                continue
            lines = (result.stdout or result.stderr).strip().splitlines()
            if lines and re.search(r"\d+\.\d+", lines[0]):  # some print it and exit 1 (cherokee --version)
                return lines[0][:200]
    return "unknown (no package owns it and it prints no version)"


def _build_of(provides: str, sha256: str, builds: list[ByoBuild]) -> str | None:
    """The byo build that made exactly this file (same checksum), described for a reader."""
    for build in builds:
        if any(f.provides == provides and f.sha256 == sha256 for f in build.files):
            patches = ", ".join(build.patches) or "no patch"
            return f"built by invoke byo {build.name} on {build.built_at[:10]} from {build.source}, with {patches}"
    return None


def subject_origins(subject: AnySubject, values: dict[str, str], repo: Path) -> tuple[Origin, ...]:
    """The origin of every module a subject requires and every program it runs or requires."""
    builds = read_builds(repo)
    origins = []
    for module in subject.requires:
        path = imported(module).path
        if path is None:
            continue
        digest = sha256_of(path) if path.is_file() else None  # a namespace package is a folder
        origins.append(
            Origin(
                provides=module,
                path=portable_path(path, repo),
                version=", ".join(providers(module)) or NO_DISTRIBUTION,
                sha256=digest,
                build=_build_of(module, digest, builds) if digest else None,
            )
        )
    programs = [fill_placeholders(p, values, subject.name) for p in subject.requires_programs]
    first = fill_placeholders(subject.argv[0], values, subject.name)
    env = recorded_env(first) if subject.argv[0].startswith("{sweep}/") else None
    if env is not None:  # a package variant's copy: the pinned distributions it runs, not the interpreter
        origins += [
            Origin(
                provides=name,
                path=f"{{sweep}}/{env.folder}",
                version=env.described(),
                sha256=env.dist_sha256[name],
                build=f"patched with {env.wanted.patch}" if env.wanted.patch else None,
            )
            for name in env.wanted.pins
        ]
    elif first not in programs and first != values["python"]:
        programs.append(first)
    for program in programs:
        found = shutil.which(program)
        if found is None:
            continue
        path = Path(found)
        digest = sha256_of(path)
        origins.append(
            Origin(
                provides=Path(program).name,
                path=portable_path(path, repo),
                version=_program_version(path),
                sha256=digest,
                build=_build_of(Path(program).name, digest, builds),
            )
        )
    return tuple(origins)
