"""A release sweep: one environment per release of a package (made once, cached under build/sweep/), and
the recipe with every subject that uses the package copied once per release, so that all releases are
measured interleaved in the same rounds."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.byo import sha256_of
from benchsite.harness.environment import utc_now
from benchsite.model.conf import Profile, Sweep
from benchsite.model.recipe import Recipe
from benchsite.model.sweep import RELEASE_FILE, SWEEP_DIR, ReleaseEnv, release_folder, release_slug
from benchsite.records import read_json
from benchsite.results.store import write_json

PIP_TIMEOUT_S = 900  # an old release builds its wheel from the sdist


def release_env(sweep: Sweep, release: str, conf_dir: Path, say: Callable[[str], None] = print) -> ReleaseEnv:
    """The environment of one release: reused when its record matches, else made from PyPI (and patched)."""
    folder = SWEEP_DIR / release_folder(sweep.package, release)
    patch = _patch_file(sweep, release, conf_dir)
    found = _reusable(folder, patch)
    if found is not None:
        return found
    say(f"making the environment of {sweep.package} {release} under build/sweep/ (once; later runs reuse it)")
    started = time.monotonic()
    shutil.rmtree(folder, ignore_errors=True)
    try:
        record = _make(folder, sweep.package, release, patch, started)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # never half an environment
        raise
    write_json(folder / RELEASE_FILE, record.to_json())
    return record


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


def _make(folder: Path, package: str, release: str, patch: Path | None, started: float) -> ReleaseEnv:
    _run([sys.executable, "-m", "venv", str(folder)], f"making a virtualenv for {package} {release}")
    python = str(folder / "bin" / "python")
    report = folder / "pip-report.json"
    _run(
        [python, "-m", "pip", "install", "-q", "--report", str(report), f"{package}=={release}"],
        f"pip could not install {package}=={release}",
    )
    dist_file, dist_sha256 = _installed_from(report, package)
    if patch is not None:
        site = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], "").strip()
        _run(
            ["patch", "-p1", "--forward", "--batch", "-d", site, "-i", str(patch.resolve())],
            f"{patch.name} does not apply to {package} {release}",
        )
    frozen = _run([python, "-m", "pip", "freeze", "--all", "--exclude", "pip", "--exclude", "setuptools"], "")
    return ReleaseEnv(
        package=package,
        release=release,
        dist_file=dist_file,
        dist_sha256=dist_sha256,
        patch=f"{patch.parent.name}/{patch.name}" if patch else None,
        patch_sha256=sha256_of(patch) if patch else None,
        installed=tuple(line for line in frozen.splitlines() if line.strip()),
        made_at=utc_now(),
        made_in_s=round(time.monotonic() - started, 1),
    )


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


def _run(argv: list[str], failure: str) -> str:
    """Run a step; a failure is one line: what failed and the tool's own last words."""
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BenchError(f"{failure or argv[0]}: {error}") from None
    if result.returncode != 0:
        lines = [line.strip() for line in (result.stderr + result.stdout).splitlines() if line.strip()]
        said = next(
            (line for line in lines if "FAILED" in line or line.startswith("ERROR")), lines[-1] if lines else ""
        )
        raise BenchError(
            f"{failure or argv[0]} ({' '.join(said.split())}): check the release and the patch in the conf"
        )
    return result.stdout


Copies = dict[str, dict[str, str]]  # {release slug: {subject: its copy for that release}}


def swept(recipe: Recipe, profile: Profile, say: Callable[[str], None] = print) -> tuple[Recipe, Copies]:
    """The recipe with each subject the sweep names copied once per release of the profile (in release
    order, interleaved like any subjects), and {release slug: {subject: its copy}} for the claims."""
    sweep = recipe.sweep
    if sweep is None or not profile.releases:
        return recipe, {}
    envs = {release: release_env(sweep, release, recipe.conf_path.parent, say) for release in profile.releases}
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
