"""Package environments for variants (see model/sweep.py): resolved with `uv pip compile` (as of a release's
upload time, or to the checkout's versions), installed with pip from that exact list (its report names the
file of each pinned distribution), patched where an old release needs it, and recorded. Made once under
build/sweep/, as many side by side as the harness has CPUs; reused while their record matches."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion

from benchsite.errors import BenchError
from benchsite.harness.basics.environment import utc_now
from benchsite.harness.builds.byo import sha256_of
from benchsite.harness.processes.commands import run_helpers
from benchsite.harness.variants.sources import SOURCES_DIR
from benchsite.model.recipe import AnySubject, Recipe
from benchsite.model.sweep import ENV_FILE, SWEEP_DIR, EnvWanted, PackageEnv
from benchsite.model.variant import canonical
from benchsite.records import read_json
from benchsite.results.store import write_json

PIP_TIMEOUT_S = 900  # an old release builds its wheel from the sdist
INDEX = "https://pypi.org/simple"  # the registry whose upload times date a release (PEP 700)
UPLOAD_TIMES = SWEEP_DIR / "upload-times.json"  # {"cheroot==6.0.0": "2017-12-05T04:01:42.817041Z"}: asked once
# Build back-ends are not held to a release's date: 2013's setuptools does not run on today's Python.
BUILD_TOOLS = ("setuptools", "wheel", "setuptools-scm")


def upload_time(distribution: str, version: str) -> str:
    """When the registry received the release's last file (RFC 3339), asked once and kept under build/sweep/."""
    key = f"{canonical(distribution)}=={version}"
    known: dict[str, str] = json.loads(UPLOAD_TIMES.read_text()) if UPLOAD_TIMES.is_file() else {}
    if key in known:
        return known[key]
    request = urllib.request.Request(
        f"{INDEX}/{canonical(distribution)}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            files = json.load(reply)["files"]
    except (OSError, ValueError, KeyError) as error:
        raise BenchError(f"cannot ask the registry when {distribution} {version} came out ({error})") from None
    times = [f["upload-time"] for f in files if _version_of_file(f["filename"], distribution) == version]
    if not times:
        raise BenchError(f"the registry has no release {version} of {distribution}: check the version")
    known[key] = max(times)
    UPLOAD_TIMES.parent.mkdir(parents=True, exist_ok=True)
    UPLOAD_TIMES.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    return known[key]


def _version_of_file(filename: str, distribution: str) -> str | None:
    """cheroot-6.0.0-py2.py3-none-any.whl or cheroot-6.0.0.tar.gz -> "6.0.0" (None: another's or unreadable)."""
    try:
        if filename.endswith(".whl"):
            name, version, *_ = parse_wheel_filename(filename)
        else:
            name, version = parse_sdist_filename(filename)
    except (InvalidSdistFilename, InvalidWheelFilename, InvalidVersion):
        return None
    return str(version) if canonical(name) == canonical(distribution) else None


def of_its_time(pins: dict[str, str]) -> str:
    """The cut-off for what comes beside the pins: a second after the newest pinned release's upload."""
    newest = max(upload_time(name, version) for name, version in pins.items())
    moment = datetime.fromisoformat(newest.replace("Z", "+00:00")) + timedelta(seconds=1)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def closure(distributions: Iterable[str]) -> dict[str, str]:
    """The distributions named and everything they need, as this checkout's environment has them:
    {canonical name: version}. One this environment lacks is a one-line error."""
    found: dict[str, str] = {}
    waiting = [canonical(name) for name in distributions]
    while waiting:
        name = waiting.pop()
        if name in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise BenchError(
                f"{name} is not installed in this checkout's environment: install requirements.txt"
            ) from None
        found[name] = dist.version
        for line in dist.requires or ():
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                waiting.append(canonical(requirement.name))
    return found


def subject_distributions(recipe: Recipe, subject: AnySubject) -> tuple[str, ...]:
    """The distributions a subject runs: its own `packages`, else those that provide the modules it requires
    (as this checkout's environment has them) with the recipe's common ones, else the recipe's."""
    if subject.packages:
        return subject.packages
    if not subject.requires:
        return recipe.common_packages or recipe.packages
    provided = metadata.packages_distributions()
    own = [name for module in subject.requires for name in provided.get(module.split(".")[0], [])]
    return tuple(dict.fromkeys([*recipe.common_packages, *own]))


def package_envs(wanted: Sequence[EnvWanted], conf_dir: Path, say: Callable[[str], None] = print) -> list[PackageEnv]:
    """The environments, in the order wanted: each reused when whole, the others made (patches are under
    conf_dir)."""
    envs: dict[str, PackageEnv] = {}
    missing: dict[str, EnvWanted] = {}
    for each in wanted:
        found = _reusable(each)
        if found is None:
            missing[each.folder] = each
        else:
            envs[each.folder] = found
    at_once = len(os.sched_getaffinity(0))
    batches = [list(missing.values())[i : i + at_once] for i in range(0, len(missing), at_once)]
    for batch in batches:
        shown = ", ".join(" ".join(each.requirements) for each in batch)
        say(f"making the environment{'s' if len(batch) > 1 else ''} of {shown} under build/sweep/ (once)")
        envs.update({env.folder: env for env in _made(batch, conf_dir)})
    return [envs[each.folder] for each in wanted]


def _reusable(wanted: EnvWanted) -> PackageEnv | None:
    """The stored record, if the environment is whole and was made as wanted."""
    folder = SWEEP_DIR / wanted.folder
    path = folder / ENV_FILE
    if not path.is_file() or not (folder / "bin" / "python").exists():
        return None
    try:
        record = PackageEnv.from_json(read_json(path), path)
    except BenchError:
        return None
    return record if record.wanted == wanted else None


def _made(batch: list[EnvWanted], conf_dir: Path) -> list[PackageEnv]:
    """Make the environments side by side; on any way out but success, none of them is left."""
    started = time.monotonic()
    folders = [SWEEP_DIR / each.folder for each in batch]
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    try:
        records = _make(batch, folders, conf_dir, started)
    except BaseException:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)  # never half an environment
        raise
    for folder, record in zip(folders, records, strict=True):
        write_json(folder / ENV_FILE, record.to_json())  # the record last: it marks a whole one
    return records


def _make(batch: list[EnvWanted], folders: list[Path], conf_dir: Path, started: float) -> list[PackageEnv]:
    _steps([([sys.executable, "-m", "venv", str(folder)], "making a virtualenv") for folder in folders])
    _steps(
        [
            (_compile(each, folder), f"no environment holds {' '.join(each.requirements)}")
            for each, folder in zip(batch, folders, strict=True)
        ]
    )
    pythons = [str(folder / "bin" / "python") for folder in folders]
    install = ["-m", "pip", "install", "-q", "--no-deps"]
    _steps(
        [
            (
                [python, *install, "--report", str(folder / "pip-report.json"), "-r", str(folder / "resolved.txt")],
                f"pip could not install {' '.join(each.requirements)}",
            )
            for each, folder, python in zip(batch, folders, pythons, strict=True)
        ]
    )
    for each, python in zip(batch, pythons, strict=True):
        if each.patch is not None:
            _patch(python, conf_dir / each.patch, f"{each.patch} does not apply to {' '.join(each.requirements)}")
    freeze = ["-m", "pip", "freeze", "--all", "--exclude", "pip", "--exclude", "setuptools"]
    frozen = [
        _as_pinned(listed, each)
        for listed, each in zip(_steps([([python, *freeze], "pip freeze") for python in pythons]), batch, strict=True)
    ]
    made_in_s = round(time.monotonic() - started, 1)
    records = []
    for each, folder, listed in zip(batch, folders, frozen, strict=True):
        files = _installed_from(folder / "pip-report.json", list(each.pins))
        records.append(
            PackageEnv(
                wanted=each,
                dist_files={name: file for name, (file, _) in files.items()},
                dist_sha256={name: digest for name, (_, digest) in files.items()},
                installed=tuple(line for line in listed.splitlines() if line.strip()),
                made_at=utc_now(),
                made_in_s=made_in_s,
            )
        )
    return records


def _as_pinned(listed: str, wanted: EnvWanted) -> str:
    """pip freeze's lines, a distribution built from source as NAME==VERSION (not its wheel's path)."""
    built = {canonical(name): name for name in wanted.wheels}
    lines = []
    for line in listed.splitlines():
        name = line.split(" @ ", 1)[0].strip()
        lines.append(
            f"{name}=={wanted.pins[built[canonical(name)]]}" if " @ " in line and canonical(name) in built else line
        )
    return "\n".join(lines)


def _compile(wanted: EnvWanted, folder: Path) -> list[str]:
    """`uv pip compile`'s command for the environment's exact list (folder/resolved.txt)."""
    built = {canonical(name): SOURCES_DIR / wheel for name, wheel in wanted.wheels.items()}
    asked = [
        f"{name} @ {built[canonical(name)].as_uri()}" if canonical(name) in built else f"{name}=={version}"
        for name, version in wanted.pins.items()
    ]
    (folder / "wanted.txt").write_text("\n".join((*asked, *wanted.beside)) + "\n")
    (folder / "constraints.txt").write_text("".join(f"{line}\n" for line in wanted.constraints))
    argv = [
        str(Path(sys.executable).with_name("uv")), "pip", "compile", "--quiet", "--no-header", "--no-annotate",
        "--python-version", f"{sys.version_info.major}.{sys.version_info.minor}",
        "-c", str(folder / "constraints.txt"), "-o", str(folder / "resolved.txt"), str(folder / "wanted.txt"),
    ]  # fmt: skip
    if wanted.resolved_as_of:
        argv += ["--exclude-newer", wanted.resolved_as_of]
        argv += [f"--exclude-newer-package={tool}=2999-01-01T00:00:00Z" for tool in BUILD_TOOLS]
    return argv


def _patch(python: str, patch: Path, failure: str) -> None:
    """Apply the patch to the environment's site-packages."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    [site] = _steps([([python, "-c", code], "finding site-packages")])
    _steps([(["patch", "-p1", "--forward", "--batch", "-d", site.strip(), "-i", str(patch.resolve())], failure)])


def _installed_from(report: Path, pinned: list[str]) -> dict[str, tuple[str, str]]:
    """{pinned distribution: (the file pip installed it from, its sha256)}, from pip's installation report."""
    found = {}
    try:
        entries = json.loads(report.read_text())["install"]
        for name in pinned:
            entry = next(e for e in entries if canonical(e["metadata"]["name"]) == canonical(name))
            url = entry["download_info"]["url"]
            if url.startswith("file:"):  # a wheel built from its source: its own record has the digest
                found[name] = (
                    url.rsplit("/", 1)[-1],
                    sha256_of(Path(urllib.parse.unquote(url.removeprefix("file://")))),
                )
                continue
            found[name] = (url.rsplit("/", 1)[-1], entry["download_info"]["archive_info"]["hashes"]["sha256"])
    except (OSError, ValueError, KeyError, StopIteration) as error:
        raise BenchError(
            f"{report}: pip's report does not say what {', '.join(pinned)} came from ({error!r})"
        ) from None
    return found


def _steps(commands: list[tuple[list[str], str]]) -> list[str]:
    """One step of each environment's making, side by side ([(argv, what a failure is)]): their outputs, or a
    one-line error for the first that failed, with the tool's own words."""
    runs = run_helpers([argv for argv, _ in commands], PIP_TIMEOUT_S)
    for (_, failure), run in zip(commands, runs, strict=True):
        if run.exit_code != 0:
            raise BenchError(f"{failure} ({_said(run.stderr + run.stdout)}): check the versions and the patch")
    return [run.stdout for run in runs]


def _said(output: str) -> str:
    """A tool's failure in one line: pip's FAILED/ERROR line, or uv's error and its causes."""
    lines = [" ".join(line.split()) for line in output.splitlines() if line.strip()]
    for line in lines:
        if "FAILED" in line or line.startswith("ERROR"):
            return line
    errors = [line for line in lines if not line.startswith("hint:")]
    text = " ".join(line.removeprefix("error: ").removeprefix("cause: ") for line in errors)
    return text[:400] if text else "no message"


def recorded_env(python: str) -> PackageEnv | None:
    """The record of the environment a subject's interpreter belongs to (None: not a variant's)."""
    path = Path(python).parent.parent / ENV_FILE
    if not path.is_file():
        return None
    return PackageEnv.from_json(read_json(path), path)
