"""A release sweep: one environment per release of a package (made once, cached under build/sweep/), and
the recipe with every subject that uses the package copied once per release, so that all releases are
measured interleaved in the same rounds."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.byo import sha256_of
from benchsite.harness.environment import utc_now
from benchsite.harness.processes import run_helpers
from benchsite.model.conf import Profile, Sweep
from benchsite.model.recipe import Recipe
from benchsite.model.sweep import RELEASE_FILE, SWEEP_DIR, ReleaseEnv, release_folder, release_slug
from benchsite.records import read_json
from benchsite.results.store import write_json

PIP_TIMEOUT_S = 900  # an old release builds its wheel from the sdist


def release_env(sweep: Sweep, release: str, conf_dir: Path, say: Callable[[str], None] = print) -> ReleaseEnv:
    """The environment of one release: reused when its record matches, else made from PyPI (and patched)."""
    return release_envs(sweep, [release], conf_dir, say)[release]


def release_envs(
    sweep: Sweep, releases: Sequence[str], conf_dir: Path, say: Callable[[str], None] = print
) -> dict[str, ReleaseEnv]:
    """The environments of the releases: each reused when its record matches; the others made from PyPI
    (and patched), as many side by side as the harness has CPUs (making one is mostly pip's own CPU)."""
    envs: dict[str, ReleaseEnv] = {}
    wanted: dict[str, Path | None] = {}
    for release in releases:
        patch = _patch_file(sweep, release, conf_dir)
        found = _reusable(SWEEP_DIR / release_folder(sweep.package, release), patch)
        if found is None:
            wanted[release] = patch
        else:
            envs[release] = found
    missing = list(wanted)
    at_once = len(os.sched_getaffinity(0))
    for batch in (missing[i : i + at_once] for i in range(0, len(missing), at_once)):
        made = "the environments" if len(batch) > 1 else "the environment"
        say(f"making {made} of {sweep.package} {', '.join(batch)} under build/sweep/ (once; later runs reuse it)")
        envs.update(_made(sweep.package, {release: wanted[release] for release in batch}))
    return {release: envs[release] for release in releases}


def _patch_file(sweep: Sweep, release: str, conf_dir: Path) -> Path | None:
    name = sweep.patches.get(release)
    if name is None:
        return None
    path = conf_dir / name
    if not path.is_file():
        raise BenchError(
            f"{conf_dir}: sweep.patches names {name} for {release}, which is not there: add it or fix the name"
        )
    return path


def _reusable(folder: Path, patch: Path | None) -> ReleaseEnv | None:
    """The stored record, if the environment is whole and was made with the same patch."""
    path = folder / RELEASE_FILE
    if not path.is_file() or not (folder / "bin" / "python").exists():
        return None
    try:
        record = ReleaseEnv.from_json(read_json(path), path)
    except BenchError:
        return None
    wanted = sha256_of(patch) if patch else None
    return record if record.patch_sha256 == wanted else None


def _made(package: str, patches: dict[str, Path | None]) -> dict[str, ReleaseEnv]:
    """Make the releases' environments side by side; on any way out but success, none of them is left."""
    started = time.monotonic()
    folders = {release: SWEEP_DIR / release_folder(package, release) for release in patches}
    for folder in folders.values():
        shutil.rmtree(folder, ignore_errors=True)
    try:
        records = _make(package, folders, patches, started)
    except BaseException:
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)  # never half an environment
        raise
    for release, record in records.items():
        write_json(folders[release] / RELEASE_FILE, record.to_json())  # the record last: it marks a whole one
    return records


def _make(
    package: str, folders: dict[str, Path], patches: dict[str, Path | None], started: float
) -> dict[str, ReleaseEnv]:
    pythons = {release: str(folder / "bin" / "python") for release, folder in folders.items()}
    reports = {release: folder / "pip-report.json" for release, folder in folders.items()}
    _steps(
        {
            release: ([sys.executable, "-m", "venv", str(folder)], f"making a virtualenv for {package} {release}")
            for release, folder in folders.items()
        }
    )
    _steps(
        {
            release: (
                [python, "-m", "pip", "install", "-q", "--report", str(reports[release]), f"{package}=={release}"],
                f"pip could not install {package}=={release}",
            )
            for release, python in pythons.items()
        }
    )
    for release, patch in patches.items():
        if patch is not None:
            _patch(release, pythons[release], patch, f"{patch.name} does not apply to {package} {release}")
    freeze = ["-m", "pip", "freeze", "--all", "--exclude", "pip", "--exclude", "setuptools"]
    frozen = _steps({release: ([python, *freeze], "pip freeze") for release, python in pythons.items()})
    made_in_s = round(time.monotonic() - started, 1)
    records = {}
    for release, patch in patches.items():
        dist_file, dist_sha256 = _installed_from(reports[release], package)
        records[release] = ReleaseEnv(
            package=package,
            release=release,
            dist_file=dist_file,
            dist_sha256=dist_sha256,
            patch=f"{patch.parent.name}/{patch.name}" if patch else None,
            patch_sha256=sha256_of(patch) if patch else None,
            installed=tuple(line for line in frozen[release].splitlines() if line.strip()),
            made_at=utc_now(),
            made_in_s=made_in_s,
        )
    return records


def _patch(release: str, python: str, patch: Path, failure: str) -> None:
    """Apply the patch to the release environment's site-packages."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = _steps({release: ([python, "-c", code], "finding site-packages")})[release].strip()
    _steps({release: (["patch", "-p1", "--forward", "--batch", "-d", site, "-i", str(patch.resolve())], failure)})


def _installed_from(report: Path, package: str) -> tuple[str, str]:
    """The file pip installed the package from and its sha256, from pip's installation report."""
    try:
        entries = json.loads(report.read_text())["install"]
        entry = next(e for e in entries if e["metadata"]["name"].lower() == package.lower())
        url = entry["download_info"]["url"]
        sha256 = entry["download_info"]["archive_info"]["hashes"]["sha256"]
    except (OSError, ValueError, KeyError, StopIteration) as error:
        raise BenchError(f"{report}: pip's report does not say what {package} came from ({error!r})") from None
    return url.rsplit("/", 1)[-1], sha256


def _steps(commands: dict[str, tuple[list[str], str]]) -> dict[str, str]:
    """One step of each release's making, side by side ({release: (argv, what a failure is)}): their outputs,
    or a one-line error for the first that failed, with the tool's own last words."""
    runs = run_helpers([argv for argv, _ in commands.values()], PIP_TIMEOUT_S)
    for (_, failure), run in zip(commands.values(), runs, strict=True):
        if run.exit_code != 0:
            lines = [line.strip() for line in (run.stderr + run.stdout).splitlines() if line.strip()]
            said = next(
                (line for line in lines if "FAILED" in line or line.startswith("ERROR")), lines[-1] if lines else ""
            )
            raise BenchError(f"{failure} ({' '.join(said.split())}): check the release and the patch in the conf")
    return {release: run.stdout for release, run in zip(commands, runs, strict=True)}


Copies = dict[str, dict[str, str]]  # {release slug: {subject: its copy for that release}}


def swept(recipe: Recipe, profile: Profile, say: Callable[[str], None] = print) -> tuple[Recipe, Copies]:
    """The recipe with each subject the sweep names copied once per release of the profile (in release
    order, interleaved like any subjects), and {release slug: {subject: its copy}} for the claims."""
    sweep = recipe.sweep
    if sweep is None or not profile.releases:
        return recipe, {}
    envs = release_envs(sweep, profile.releases, recipe.conf_path.parent, say)
    copies: Copies = {release_slug(r): {} for r in profile.releases}
    subjects = []
    for subject in recipe.subjects:
        if subject.name not in sweep.subjects:
            subjects.append(subject)
            continue
        if subject.argv[0] != "{python}":
            raise BenchError(
                f"{recipe.conf_path}: sweep.subjects: {subject.name} does not run {{python}}, so no release can run it"
            )
        for release, env in envs.items():
            slug = release_slug(release)
            name = f"{subject.name}-{slug}"
            copies[slug][subject.name] = name
            label = sweep.labels.get(subject.name, "{label}, {package} {release}")
            subjects.append(
                subject.model_copy(
                    update={
                        "name": name,
                        "label": label.format(label=subject.label, package=sweep.package, release=release),
                        "argv": (f"{{sweep}}/{env.folder}/bin/python", *subject.argv[1:]),
                    }
                )
            )
    return replace(recipe, subjects=tuple(subjects)), copies


def recorded_env(python: str) -> ReleaseEnv | None:
    """The release record of the environment a subject's interpreter belongs to (None: not a sweep's)."""
    path = Path(python).parent.parent / RELEASE_FILE
    if not path.is_file():
        return None
    return ReleaseEnv.from_json(read_json(path), path)
