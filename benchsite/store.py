"""Run directories under data/: written whole or not at all, read back as typed records.

One run is one directory, data/<recipe>/<run-id>/, holding run.json (format
version, environment, argv of every command, parsed results of every
repetition) and raw/, the load tool's output verbatim.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsite.errors import BenchError
from benchsite.loadtools import LoadResult, result_from_dict

FORMAT_VERSION = 1
RUN_FILE = "run.json"
STAGING_PREFIX = ".incomplete-"


@dataclass(frozen=True)
class Repetition:
    """One measured load-tool run of one cell."""

    index: int
    argv: tuple[str, ...]
    exit_code: int
    timed_out: bool
    raw_output: str  # path relative to the run directory
    wall_s: float
    tool_cpu_s: float
    server_cpu_s: float
    result: LoadResult | None
    error: str | None
    backend_cpu_s: dict[str, float] = field(default_factory=dict)  # CPU of each backend (role server)

    @property
    def ok(self) -> bool:
        return self.result is not None and self.error is None

    @property
    def server_cpu_us_per_request(self) -> float | None:
        if self.result is None or self.result.complete_requests <= 0:
            return None
        return self.server_cpu_s * 1e6 / self.result.complete_requests

    @property
    def tool_cpu_us_per_request(self) -> float | None:
        if self.result is None or self.result.complete_requests <= 0:
            return None
        return self.tool_cpu_s * 1e6 / self.result.complete_requests


@dataclass(frozen=True)
class CellRecord:
    """All repetitions of one cell for one subject."""

    name: str
    label: str
    tool: str
    concurrency: int
    keepalive: bool
    requests: int | None  # ab's -n; None for wrk
    repetitions: tuple[Repetition, ...]
    duration_s: int | None = None  # wrk's -d; None for ab


@dataclass(frozen=True)
class SubjectRecord:
    """One subject's command, verification and cells."""

    name: str
    label: str
    argv: tuple[str, ...]
    server_software: str | None
    verification: dict[str, Any]
    cells: tuple[CellRecord, ...]
    role: str = "subject"
    keeps_http10_alive: bool | None = None  # the start-up probe: a second HTTP/1.0 keep-alive request answered

    def cell(self, name: str) -> CellRecord | None:
        return next((cell for cell in self.cells if cell.name == name), None)


@dataclass(frozen=True)
class SkippedSubject:
    """A subject that did not run (a module it needs does not import here), and why."""

    name: str
    label: str
    reason: str
    detail: str


@dataclass(frozen=True)
class RunRecord:
    """A whole run, as stored in run.json."""

    path: Path
    recipe: str
    title: str
    run_id: str
    profile: dict[str, Any]
    started_at: str
    finished_at: str
    settings: dict[str, Any]
    environment: dict[str, Any]
    subjects: tuple[SubjectRecord, ...]
    skipped: tuple[SkippedSubject, ...] = ()

    @property
    def run_file(self) -> Path:
        return self.path / RUN_FILE

    def subject(self, name: str) -> SubjectRecord | None:
        return next((subject for subject in self.subjects if subject.name == name), None)

    @property
    def measured(self) -> tuple[SubjectRecord, ...]:
        """The subjects under test: servers under load or clients; not a ceiling, not the clients' server."""
        return tuple(subject for subject in self.subjects if subject.role in ("subject", "client"))

    @property
    def ceiling(self) -> SubjectRecord | None:
        return next((subject for subject in self.subjects if subject.role == "ceiling"), None)

    @property
    def cell_names(self) -> tuple[str, ...]:
        """Every cell name, in recipe order."""
        names: dict[str, None] = {}
        for subject in self.subjects:
            names.update(dict.fromkeys(cell.name for cell in subject.cells))
        return tuple(names)

    def raw_text(self, repetition: Repetition) -> str:
        return (self.path / repetition.raw_output).read_text()


def repetition_to_dict(rep: Repetition) -> dict[str, Any]:
    return {
        "index": rep.index,
        "argv": list(rep.argv),
        "exit_code": rep.exit_code,
        "timed_out": rep.timed_out,
        "raw_output": rep.raw_output,
        "wall_s": rep.wall_s,
        "tool_cpu_s": rep.tool_cpu_s,
        "server_cpu_s": rep.server_cpu_s,
        "result": None if rep.result is None else rep.result.to_dict(),
        "error": rep.error,
        "backend_cpu_s": rep.backend_cpu_s,
    }


def _repetition(data: dict[str, Any]) -> Repetition:
    return Repetition(
        index=data["index"],
        argv=tuple(data["argv"]),
        exit_code=data["exit_code"],
        timed_out=data["timed_out"],
        raw_output=data["raw_output"],
        wall_s=data["wall_s"],
        tool_cpu_s=data["tool_cpu_s"],
        server_cpu_s=data["server_cpu_s"],
        result=None if data["result"] is None else result_from_dict(data["result"]),
        error=data["error"],
        backend_cpu_s=data.get("backend_cpu_s", {}),
    )


def _cell(data: dict[str, Any]) -> CellRecord:
    return CellRecord(
        name=data["name"],
        label=data["label"],
        tool=data["tool"],
        concurrency=data["concurrency"],
        keepalive=data["keepalive"],
        requests=data["requests"],
        repetitions=tuple(_repetition(rep) for rep in data["repetitions"]),
        duration_s=data.get("duration_s"),
    )


def _subject(data: dict[str, Any]) -> SubjectRecord:
    return SubjectRecord(
        name=data["name"],
        label=data["label"],
        argv=tuple(data["argv"]),
        server_software=data["server_software"],
        verification=data["verification"],
        cells=tuple(_cell(cell) for cell in data["cells"]),
        role=data.get("role", "subject"),
        keeps_http10_alive=data.get("keeps_http10_alive"),
    )


def load_run(path: Path) -> RunRecord:
    """Read one run directory; a missing, broken or unknown-version file is a BenchError naming it."""
    run_file = path / RUN_FILE
    try:
        data = json.loads(run_file.read_text())
    except FileNotFoundError:
        raise BenchError(f"{run_file}: no such file: re-run the recipe or pick another run") from None
    except json.JSONDecodeError as error:
        raise BenchError(f"{run_file}: not valid JSON ({error}): restore it from git or delete the run") from None
    version = data.get("format_version") if isinstance(data, dict) else None
    if version != FORMAT_VERSION:
        raise BenchError(
            f"{run_file}: data format version {version!r}, but this harness reads version "
            f"{FORMAT_VERSION}: update the harness (git pull) or re-run the recipe"
        )
    try:
        return RunRecord(
            path=path,
            recipe=data["recipe"],
            title=data["title"],
            run_id=data["run_id"],
            profile=data["profile"],
            started_at=data["started_at"],
            finished_at=data["finished_at"],
            settings=data["settings"],
            environment=data["environment"],
            subjects=tuple(_subject(subject) for subject in data["subjects"]),
            skipped=tuple(SkippedSubject(**skipped) for skipped in data.get("skipped_subjects", [])),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise BenchError(f"{run_file}: malformed run document ({error!r}): restore it from git or re-run") from None


def list_runs(recipe_data_dir: Path) -> list[Path]:
    """Finished run directories of one recipe, oldest first (run ids sort by time)."""
    if not recipe_data_dir.is_dir():
        return []
    return sorted(path.parent for path in recipe_data_dir.glob(f"*/{RUN_FILE}") if not path.parent.name.startswith("."))


def latest_run(recipe_data_dir: Path) -> Path | None:
    runs = list_runs(recipe_data_dir)
    return runs[-1] if runs else None


@contextmanager
def staged_run_directory(recipe_data_dir: Path, run_id: str) -> Iterator[Path]:
    """A staging directory that becomes data/<recipe>/<run_id> only if the block succeeds.

    On any exception (Ctrl-C included) the staging directory is removed, so
    an interrupted run leaves nothing behind; an existing run is never replaced.
    """
    final = recipe_data_dir / run_id
    if final.exists():
        raise BenchError(f"{final} already exists: wait a second and run again")
    staging = recipe_data_dir / f"{STAGING_PREFIX}{run_id}"
    staging.mkdir(parents=True)
    try:
        yield staging
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write JSON with sorted keys to a temporary name, then rename it into place."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    os.replace(temporary, path)
