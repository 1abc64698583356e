"""A distribution built from its own source for a variant (``NAME@git:REPO#REV``, ``NAME@dir:PATH``): the revision
checked out in a clone of its own, a wheel built from it as its own packaging asks (pip, build isolation: its
setuptools_scm and the like from the registry), kept under build/sources/ and recorded with the commit it came
from. A revision that does not build is a `BuildError`, in one line."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.builds.byo import sha256_of
from benchsite.harness.processes.commands import run_helpers
from benchsite.model.variant import Source, SourceCommit, SourceRecord, canonical
from benchsite.records import read_json
from benchsite.results.store import write_json

SOURCES_DIR = Path(__file__).resolve().parents[3] / "build" / "sources"  # ignored by git
BUILD_TIMEOUT_S = 900
GIT_TIMEOUT_S = 600
LOG_LINES = 30  # the end of a build's output, as run.json keeps it
# An absolute path in a tool's output (not a URL's): run.json keeps its last part alone, no machine's paths.
_PATH = re.compile(r"(?<![\w.:/])(?:/[\w.+@~-]+)+/?")


class BuildError(BenchError):
    """The revision's source does not build into the distribution."""


def repository(source: Source, say: object = None) -> Path:
    """The local repository to read the source's revision from: its folder, or a mirror of its URL under
    build/sources/repos/ (made once, brought up to date where the revision is not in it)."""
    if not source.is_url:
        if _git(["-C", source.where, "rev-parse", "--git-dir"], check=False) is None:
            raise BenchError(f"{source.where} is not a git repository: give a clone of {source.distribution}'s")
        return Path(source.where)
    mirror = SOURCES_DIR / "repos" / hashlib.sha256(source.where.encode()).hexdigest()[:12]
    if not mirror.is_dir():
        mirror.parent.mkdir(parents=True, exist_ok=True)
        partial = mirror.with_suffix(".part")
        shutil.rmtree(partial, ignore_errors=True)
        _git(["clone", "--quiet", "--mirror", source.where, str(partial)], what=f"cannot clone {source.where}")
        partial.rename(mirror)
    elif _commit_id(mirror, source.revision) is None:
        _git(["-C", str(mirror), "fetch", "--quiet", "--tags", "origin"], what=f"cannot fetch {source.where}")
    return mirror


def commit(repo: Path, revision: str, shown: str) -> SourceCommit:
    """The revision's commit, or a one-line error where the repository has none of that name."""
    found = _commit_id(repo, revision)
    if found is None:
        raise BenchError(f"{shown} has no revision {revision!r}: give a commit, tag or branch it has")
    out = _git(["-C", str(repo), "show", "-s", "--format=%cI%n%s", found], what="git show") or ""
    date, _, subject = out.partition("\n")
    return SourceCommit(id=found, date=date.strip(), subject=subject.strip())


def _commit_id(repo: Path, revision: str) -> str | None:
    out = _git(["-C", str(repo), "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"], check=False)
    return out.strip() if out else None


def built(source: Source) -> tuple[SourceRecord, Path]:
    """The source's wheel and its record: built once per commit (a folder's, each time asked)."""
    shown = source.shown.split("@", 1)[1]
    if source.how == "git":
        repo = repository(source)
        found = commit(repo, source.revision, source.where if source.is_url else Path(source.where).name)
        folder = SOURCES_DIR / "wheels" / f"{canonical(source.distribution)}-{found.id[:12]}"
        record_path = folder / "build.json"
        if record_path.is_file():
            record = SourceRecord.from_json(read_json(record_path), record_path)
            if (folder / record.wheel).is_file():  # built before, perhaps from another clone of the repository
                return record.model_copy(update={"repository": _shown_repository(source)}), folder / record.wheel
        tree = SOURCES_DIR / "trees" / found.id[:12]
        shutil.rmtree(tree, ignore_errors=True)
        tree.parent.mkdir(parents=True, exist_ok=True)
        _git(["clone", "--quiet", "--no-checkout", str(repo), str(tree)], what=f"cannot clone {shown}")
        _git(["-C", str(tree), "checkout", "--quiet", "--detach", found.id], what=f"cannot check out {found.id}")
    else:
        found = None
        tree = Path(source.where)
        folder = SOURCES_DIR / "wheels" / f"{canonical(source.distribution)}-dir"
    try:
        record = _build(source, tree, folder, found)
    finally:
        if found is not None:
            shutil.rmtree(tree, ignore_errors=True)
    write_json(folder / "build.json", record.to_json())
    return record, folder / record.wheel


def _build(source: Source, tree: Path, folder: Path, found: SourceCommit | None) -> SourceRecord:
    """The tree's wheel into folder (emptied first), built as its packaging asks with the build tools of the
    commit's day (`uv build --exclude-newer`: today's setuptools refuses the setup.cfg of a 2019 branch), else
    of today; a failure or another distribution is one line."""
    as_of = _second_after(found.date) if found else None
    started = time.monotonic()
    logs: list[list[str]] = []
    for tools in [as_of, None] if as_of else [None]:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        argv = [str(Path(sys.executable).with_name("uv")), "build", "--wheel", "--out-dir", str(folder), str(tree)]
        [run] = run_helpers([argv + (["--exclude-newer", tools] if tools else [])], BUILD_TIMEOUT_S)
        log = scrubbed(run.stdout + run.stderr)
        logs.append(log)
        wheels = list(folder.glob("*.whl"))
        if run.exit_code == 0 and len(wheels) == 1:
            break
    else:
        at = f"{source.distribution} at {found.id[:10]}" if found else f"{source.distribution} from {tree.name}"
        raise BuildError(f"{at} does not build ({_why(logs[0])})")
    [wheel] = wheels
    name, version = wheel.name.split("-")[:2]
    if canonical(name) != canonical(source.distribution):
        raise BenchError(
            f"{source.shown}: its source builds {name}, not {source.distribution}: name the distribution it holds"
        )
    return SourceRecord(
        distribution=source.distribution,
        repository=_shown_repository(source),
        commit=found,
        version=version,
        wheel=wheel.name,
        wheel_sha256=sha256_of(wheel),
        built_in_s=round(time.monotonic() - started, 1),
        tools_as_of=tools,
        log=tuple(log[-LOG_LINES:]),
    )


def _second_after(date: str) -> str:
    """A commit's ISO 8601 date a second later, in UTC (what `--exclude-newer` takes)."""
    moment = datetime.fromisoformat(date).astimezone(UTC) + timedelta(seconds=1)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _why(log: list[str]) -> str:
    """A failed build's reason in one line: the last error a tool printed that is not a note about itself."""
    said = [line.strip() for line in log if "error" in line.lower() and not line.strip().startswith(("note:", "×"))]
    return (said[-1] if said else log[-1].strip() if log else "no output")[:200]


def _shown_repository(source: Source) -> str:
    """A URL as given, a local repository by its folder's name alone."""
    return source.where if source.is_url else Path(source.where).name


def scrubbed(output: str) -> list[str]:
    """A tool's output as lines, every absolute path reduced to its last part."""
    return [_PATH.sub(lambda m: Path(m.group(0)).name or "/", line) for line in output.splitlines() if line.strip()]


def _git(argv: list[str], what: str = "git", check: bool = True) -> str | None:
    """git's output; where it fails, None (check=False) or a one-line error with git's own words."""
    try:
        done = subprocess.run(["git", *argv], capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BenchError(f"{what}: {error}") from None
    if done.returncode != 0:
        if not check:
            return None
        said = " ".join(scrubbed(done.stderr)[-1:]) or f"exit {done.returncode}"
        raise BenchError(f"{what} ({said})")
    return done.stdout
