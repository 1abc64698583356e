"""What a run stores: data/<recipe>/<run-id>/run.json, format version 14.

One document per run: the effective profile and settings, the machine, every subject with
its verification and its cells, every repetition with its exact argv, the path of its raw
output and the parsed result. Written by the runner, read by the store, shown by the site.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, StringConstraints, model_validator

from benchsite.errors import BenchError
from benchsite.model.conf import Profile, Settings
from benchsite.model.counting import Counting
from benchsite.model.interference import MachineCheck
from benchsite.model.latency import LatencyProfile
from benchsite.model.machine import Machine
from benchsite.model.variant import VariantSet
from benchsite.records import InnerPath, Line, Name, Pair, Record, Seq, Text
from benchsite.tools import AnyCellRun, CellRun
from benchsite.tools.base import Count, Positive, Repetition
from benchsite.tools.memory import MemoryPeak

# The format of run.json, one step for every change of shape (model/upgrade.py has a step for each):
# 1  the first runs (two shapes: before and after roles, wrk and clients)
# 2  typed cells by tool, roles server/ceiling/backend/client; later with origins, topology and
#    per-repetition timing (started_after_s, steal_s, other_busy_s), filled by defaults
# 3  every field explicit (origins, topology); one name per number (tool_cpu_s -> load_cpu_s);
#    settings.tool_paths instead of ab_path and wrk_path; h2load cells; the machine (name, id,
#    fingerprint) of the run and of each host, and no SSH login or address of a host; the
#    environment's virtualization
# 4  each repetition says which clock its server CPU comes from (server_cpu_clock: "schedstat",
#    nanoseconds, or "ticks", as every run before); the profile's target_half_width (0 before);
#    the rounds say where each claim stood when they stopped (rounds.claims, empty before)
# 5  profiles record the releases they sweep (releases, empty before)
# 6  instructions per request counted under Valgrind (counting; None before), the profile's counting
#    plan (None before), and each repetition's kernel CPU of the server (server_system_s; None before)
# 7  interference acted on: each repetition says whether it was disturbed (earlier runs: judged by the
#    default rule of version 7), the settings carry that rule, the run its pre-run check of the machine
#    (machine_check; None before) and whether a busy run was accepted as one (accepted_busy; false before)
# 8  one word per thing: the profile's rounds (was repetitions, which is one load run) and the settings'
#    load_cpu (was tool_cpu, as the load CPU time load_cpu_s)
# 9  the file is compact: each cell's repetitions stored as columns, one list per field (model/columns.py),
#    and no indentation; read back, they are rows as before
# 10 each repetition's interference says its clock (other_busy_clock: "cpuacct", nanoseconds, or "ticks",
#    as every run before); a counting plan may count at a concurrency of its own (concurrency; None before)
# 11 the run records its variants (variants: an A/B run's sides or a sweep's releases, each with the copy of
#    each subject that ran it and what it ran; None: the checkout alone), and a sweep's profile its package
# 12 servers started several times in a run: the profile's starts and its counting's (1 before), and the run's
#    starts (each start's first round and hash seed; None: one start, the hash seed Python's own)
# 13 a run's variants name their reference, the variant the others are compared with (an A/B run's side a, a
#    sweep's newest release), instead of a purpose
# 14 memory: each subject's process tree once it answered (idle_memory) and each repetition's server at its
#    peak (server_memory); the open-loop latency profile (latency); None in every earlier run
# 15 profiles bound each repetition in time (seconds) and may look after every round (sequential, smallest_change)
# 16 memory readings kept in files the run names, beside the raw outputs (each repetition's memory_output, each
#    subject's idle_memory_output), so that a run's memory is checked against them as its figures are against
#    the raw outputs; None in every earlier run
FORMAT_VERSION: Literal[16] = 16
RUN_FILE = "run.json"
# 20261122T005146Z-full (version 1) or 20261122T005146.123456Z-full: sortable by time.
RunId = Annotated[str, StringConstraints(pattern=r"^\d{8}T\d{6}(\.\d{6})?Z(-[a-z0-9_-]+)?$")]
Role = Literal["server", "ceiling", "backend", "client"]


class Warmup(Record):
    """One discarded load run before the measured ones."""

    subject: Name
    cell: Name
    argv: Seq[str]
    exit_code: int


class Verification(Record):
    """The reply to the request that verified a subject before any load."""

    status: int
    headers: Seq[Pair[str, str]]
    body: str  # the first 500 bytes, decoded
    body_bytes: Count


class Origin(Record):
    """Where one module or program a subject runs came from, exactly enough to find it again."""

    provides: Text  # the module or program the subject needs
    path: str  # portable: {site_packages}/..., /usr/sbin/nginx, {repo}/build/byo/...
    version: str  # the distribution's version, the Debian package's, or the program's own words
    sha256: str | None  # of the file (a module's shared object or source, a program)
    build: str | None  # for a build of `invoke byo`: its source and the project's patches


class SubjectRun(Record):
    """One subject's command, verification and cells."""

    name: Name
    label: Line
    role: Role
    argv: Seq[str]
    server_software: str | None
    keeps_http10_alive: bool | None  # the start-up probe: a second HTTP/1.0 keep-alive request answered
    verification: Verification | None  # None: probed over TCP only, or a client
    cells: Seq[CellRun]
    origins: Seq[Origin]  # empty in runs made before invoke byo
    idle_memory: MemoryPeak | None  # its process tree once it answered, before any load (None: not recorded)
    idle_memory_output: InnerPath | None  # the file of that reading (None: not kept, as before format 16)

    @model_validator(mode="after")
    def _measured_has_cells(self) -> SubjectRun:
        if self.role != "backend" and not self.cells:
            raise ValueError(f"subject {self.name!r} ({self.role}) has no cells: a subject that ran was measured")
        return self

    def cell(self, name: str) -> AnyCellRun | None:
        return next((cell for cell in self.cells if cell.name == name), None)


class SkippedSubject(Record):
    """A subject that did not run here, and why."""

    name: Name
    label: Line
    reason: str
    detail: str

    @property
    def said(self) -> str:
        """The detail as a page says it: without Python's exception names ("ModuleNotFoundError: ...")."""
        return re.sub(r"\b[A-Z]\w*(?:Error|Exception): ", "", self.detail)


class Environment(Record):
    """The machine and software of a run; a collector that failed left 'not recorded (why)'."""

    LABELS: ClassVar[dict[str, tuple[str, str]]] = {
        "cpu_model": ("CPU model", ""),
        "cpu_count": ("Logical CPUs", ""),
        "memory_total_gib": ("Memory", "GiB"),
        "os": ("Operating system", ""),
        "kernel": ("Kernel", ""),
        "python": ("Python", ""),
        "load_average_at_start": ("Load average at start (1, 5, 15 min)", ""),
        "git_commit": ("Git commit of the harness", ""),
        "tools": ("Load tool versions", ""),
        "packages": ("Package versions", ""),
        "debian_packages": ("Debian package versions", ""),
        "virtualization": ("Virtualization", ""),
    }

    cpu_model: str
    cpu_count: int | None
    memory_total_gib: float | str
    os: str
    kernel: str
    python: str
    load_average_at_start: Seq[float] | str
    git_commit: str
    tools: dict[str, str]
    packages: dict[str, str]
    debian_packages: dict[str, str] | str
    virtualization: str  # "kvm", "none"...; "not recorded" in runs made before version 3

    def shown(self, key: str) -> str:
        """One environment value as the page shows it."""
        value = getattr(self, key)
        if isinstance(value, dict):
            value = ", ".join(f"{name} {version}" for name, version in value.items())
        elif isinstance(value, tuple):
            value = ", ".join(str(item) for item in value)
        elif key == "python":
            value = value.replace(" ({python})", " (the project's .venv)")
        return f"{value} {self.LABELS[key][1]}".strip()


class HostRecord(Record):
    """One role's host as a run records it: the machine and its environment (never how it was reached:
    logins and private addresses stay out of data/)."""

    role: Literal["server", "load"]
    machine: Machine
    environment: Environment


class Topology(Record):
    """Where a run's roles ran when they were not all on one machine (the run's own `environment`
    is then the server host's)."""

    server: HostRecord
    load: HostRecord


class Rounds(Record):
    """How many rounds a run made and why it stopped: every cell `minimum` times, then further rounds
    of the cells feeding inconclusive claims (see Profile.max_rounds)."""

    minimum: int = Field(ge=1)
    maximum: int = Field(ge=0)  # 0: no further rounds
    time_budget_s: Positive
    made: int = Field(ge=1)  # rounds made in all
    further_repetitions: Count  # repetitions of the further rounds
    stopped: str  # why no further round was made
    elapsed_s: Positive  # the measurements' wall time
    claims: dict[str, str]  # where each claim stood when the rounds stopped: its state and interval's width


class ServerStart(Record):
    """One start of a run's servers: the round it measured first, and the PYTHONHASHSEED every subject it
    started ran with (the count's start of the same number runs with it too)."""

    first_round: int = Field(ge=1)
    hash_seed: int = Field(ge=0, le=4_294_967_295)


class RunDocument(Record):
    """A whole run, as stored in run.json."""

    format_version: Literal[16]
    recipe: Name
    title: Line
    run_id: RunId
    profile: Profile
    started_at: str
    finished_at: str
    settings: Settings
    environment: Environment
    warmups: Seq[Warmup]
    subjects: Seq[SubjectRun] = Field(min_length=1)  # a run in which nothing ran is never stored
    skipped: Seq[SkippedSubject]
    rounds: Rounds | None  # None: recorded before runs said how they stopped
    machine: Machine  # where the servers ran (the server host of a two-host run)
    topology: Topology | None  # None: every role on one machine, servers on 127.0.0.1
    counting: Counting | None  # None: made before instructions were counted
    machine_check: MachineCheck | None  # None: made before runs checked the machine first
    accepted_busy: bool  # `invoke recipe --accept-busy`: pages may use it though it was measured on a busy machine
    variants: VariantSet | None  # an A/B run's sides or a sweep's releases (None: the checkout alone)
    starts: Seq[ServerStart] | None  # None: the servers started once, with hash seeds of Python's choosing
    latency: LatencyProfile | None  # the open-loop latency profile (None: the profile measured none)

    @model_validator(mode="after")
    def _memory_fits_the_machine(self) -> RunDocument:
        if not isinstance(self.environment.memory_total_gib, float | int):
            return self
        room = (self.environment.memory_total_gib + 0.1) * 2**30  # the total is rounded to 0.1 GiB
        readings = [(f"{s.name}'s idle_memory", s.idle_memory) for s in self.subjects]
        readings += [
            (f"server_memory of {rep.raw_output}", rep.server_memory)
            for _, c in self.every_cell()
            for rep in c.repetitions
        ]
        for where, reading in readings:
            if reading is not None and reading.pss_bytes > room:
                raise ValueError(
                    f"{where}: {reading.pss_mib:,.1f} MiB, more than the machine's "
                    f"{self.environment.memory_total_gib:g} GiB"
                )
        return self

    @model_validator(mode="after")
    def _peaks_hold_most_of_the_idle_reading(self) -> RunDocument:
        for subject in self.subjects:
            idle = subject.idle_memory
            for cell in subject.cells:
                for rep in cell.repetitions:
                    peak = rep.server_memory
                    if idle is not None and peak is not None and peak.far_below(idle):
                        raise ValueError(
                            f"server_memory of {rep.raw_output}: its peak ({peak.uss_mib:,.3f} MiB USS, "
                            f"{peak.pss_mib:,.3f} MiB PSS) is below half of {subject.name}'s idle reading "
                            f"({idle.uss_mib:,.1f} MiB, {idle.pss_mib:,.1f} MiB): no server reads so under load"
                        )
        return self

    def start_of(self, round_index: int) -> int:
        """The start (1, 2...) whose servers measured a round."""
        if not self.starts:
            return 1
        return sum(1 for start in self.starts if start.first_round <= round_index)

    _directory: Path | None = PrivateAttr(default=None)

    def stored_at(self, directory: Path) -> RunDocument:
        """This document, knowing the run directory it was read from."""
        self._directory = directory
        return self

    @property
    def path(self) -> Path:
        if self._directory is None:
            raise BenchError(f"run {self.run_id} was not read from a run directory")
        return self._directory

    @property
    def run_file(self) -> Path:
        return self.path / RUN_FILE

    def subject(self, name: str) -> SubjectRun | None:
        return next((subject for subject in self.subjects if subject.name == name), None)

    @property
    def measured(self) -> tuple[SubjectRun, ...]:
        """The subjects under test: servers under load or clients; not a ceiling, not a backend."""
        return tuple(subject for subject in self.subjects if subject.role in ("server", "client"))

    @property
    def ceiling(self) -> SubjectRun | None:
        return next((subject for subject in self.subjects if subject.role == "ceiling"), None)

    @property
    def cell_names(self) -> tuple[str, ...]:
        """Every cell name, in recipe order."""
        names: dict[str, None] = {}
        for subject in self.subjects:
            names.update(dict.fromkeys(cell.name for cell in subject.cells))
        return tuple(names)

    @property
    def subject_labels(self) -> dict[str, str]:
        """Every measured or skipped subject's label by name (not ceilings, not backends)."""
        return {s.name: s.label for s in self.measured} | {s.name: s.label for s in self.skipped}

    def every_cell(self) -> tuple[tuple[str, AnyCellRun], ...]:
        """(subject, cell) of every cell the run measured: the timed rounds' and its latency profile's loads.
        Whatever reads every raw output of a run (its integrity, its files) reads them from here."""
        timed = [(subject.name, cell) for subject in self.subjects for cell in subject.cells]
        paced = [
            (each.subject, load.cell) for each in (self.latency.subjects if self.latency else ()) for load in each.loads
        ]
        return (*timed, *paced)

    def cell_label(self, name: str) -> str:
        return next((c.label for s in self.subjects for c in s.cells if c.name == name), name)

    def raw_file(self, repetition: Repetition[Any]) -> Path:
        """The raw output's file, which must lie inside the run directory (links included)."""
        root = self.path.resolve()
        path = (self.path / repetition.raw_output).resolve()
        if not path.is_relative_to(root):
            raise BenchError(
                f"{self.run_file}: raw_output {repetition.raw_output!r} points outside the run "
                "directory: the page will not show it; restore the run from git"
            )
        return path

    def raw_text(self, repetition: Repetition[Any]) -> str:
        """The tool's output verbatim; a missing, unreadable or non-UTF-8 file is a BenchError naming it."""
        return self.inner_text(repetition.raw_output, "raw output")

    def inner_text(self, relative: str, what: str) -> str:
        """A file the run names, which must lie inside the run directory (links included), as text; a missing,
        unreadable or non-UTF-8 file is a BenchError naming it."""
        root = self.path.resolve()
        path = (self.path / relative).resolve()
        if not path.is_relative_to(root):
            raise BenchError(
                f"{self.run_file}: {what} {relative!r} points outside the run directory: the page will not show "
                "it; restore the run from git"
            )
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise BenchError(f"{path}: {what} named in {RUN_FILE} is missing: restore the run from git") from None
        except IsADirectoryError:
            raise BenchError(f"{path}: {what} is a directory, not a file: restore the run from git") from None
        except UnicodeDecodeError:
            raise BenchError(f"{path}: {what} is not UTF-8 text: restore the run from git") from None
        except OSError as error:
            raise BenchError(f"{path}: {what} cannot be read ({error.strerror})") from None
