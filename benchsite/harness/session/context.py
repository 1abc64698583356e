"""A run's context: what every phase of a run reads (where the roles run, the recipe, the profile, the settings,
the run's folder, the reporter, the run's clock) and what the phases fill in as it goes (the subjects started,
the repetitions measured)."""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsite.harness.basics.probes import HttpReply
from benchsite.harness.basics.progress import Reporter, SilentReporter
from benchsite.harness.hosts.placement import Placement
from benchsite.harness.processes.processes import RunningServer
from benchsite.harness.session.budget import Deadline
from benchsite.model.conf import Profile, Settings
from benchsite.model.recipe import AnySubject, Backend, Ceiling, Recipe, Server
from benchsite.tools import AnyCell
from benchsite.tools.base import Repetition
from benchsite.tools.memory import MemoryPeak

HttpServerSubject = Server | Ceiling | Backend  # the subjects the runner starts
Plan = list[tuple[AnySubject, list[AnyCell]]]  # each subject with the cells it runs
Measured = dict[tuple[str, str], list[Repetition[Any]]]  # (subject, cell): its repetitions, round by round


@dataclass(frozen=True)
class Started:
    """A running subject, the reply that verified it, and whether it keeps HTTP/1.0 connections alive."""

    subject: HttpServerSubject
    server: RunningServer
    reply: HttpReply | None  # None: probed over TCP only (a backend that does not speak HTTP)
    keeps_http10_alive: bool | None
    values: dict[str, str]  # the placeholders its command was filled with (port, port2, workdir...)
    idle_memory: MemoryPeak | None = None  # its process tree's memory once it answered, before any load
    idle_memory_output: str | None = None  # the file of that reading, in the run folder


@dataclass
class RunContext:
    """One run's shared state. `plan` holds the subjects that run (those missing their software or failing to
    start are taken out), `started` the servers running now, `measured` every timed repetition so far."""

    hosts: Placement
    recipe: Recipe
    profile: Profile
    settings: Settings
    run_dir: Path
    reporter: Reporter = field(default_factory=SilentReporter)
    run_started: float = field(default_factory=time.monotonic)
    stack: ExitStack = field(default_factory=ExitStack)  # what stops the servers when the timed phases end
    plan: Plan = field(default_factory=list)
    started: dict[str, Started] = field(default_factory=dict)
    measured: Measured = field(default_factory=dict)
    workroot: Path | None = None  # the folder the subjects work in on the server host
    counted_in: list[Path] = field(default_factory=list)  # the folders counted servers ran in (none is stored)
    unreadable: set[tuple[str, str]] = field(default_factory=set)  # (subject, cell) whose last report was unreadable
    deadline: Deadline | None = None  # when the run must end (None: its profile sets no budget)

    @property
    def address(self) -> str:
        """The server host's address, as the load host reaches it."""
        return self.hosts.server.address

    def backends(self) -> dict[str, RunningServer]:
        """The running backends (services a client under test talks to), by name."""
        return {name: s.server for name, s in self.started.items() if isinstance(s.subject, Backend)}

    def servers(self) -> list[str]:
        """The names of the server subjects that run (those counting counts)."""
        return [subject.name for subject, _ in self.plan if isinstance(subject, Server)]

    def since_start_s(self) -> float:
        """Seconds since the run began."""
        return time.monotonic() - self.run_started
