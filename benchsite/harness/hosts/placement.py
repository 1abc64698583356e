"""Where a run's roles happen: the servers' host and the load tool's host.

A run has two roles. The *server* host starts the subjects (and their backends), renders their
configs, and reads their CPU time; the *load* host probes and verifies them over the network and runs
ab or wrk against them. By default both are this machine (`LocalHost`, servers on 127.0.0.1); with
`--hosts` either role goes to another machine over SSH (`benchsite.harness.hosts.remote.RemoteHost`), where the
same operations run inside the project's agent (`benchsite.harness.hosts.agent`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from benchsite.harness.basics.environment import collect_environment
from benchsite.harness.basics.machine import CpuTimes, cpu_times, measured_cpus
from benchsite.harness.basics.probes import HttpReply, accepts_connections, http_get, keeps_http10_alive
from benchsite.harness.basics.subjects import base_values, missing_requirement, render_templates, run_prepare
from benchsite.harness.hosts.origins import subject_origins
from benchsite.harness.processes.commands import ToolRun, run_tool
from benchsite.harness.processes.processes import LOOPBACK, Launch, RunningServer, free_port, running_server
from benchsite.model.recipe import AnySubject, Recipe
from benchsite.model.run import Environment, Origin


class Host(Protocol):
    """One machine a role runs on. `address` is where its servers listen and the load host aims."""

    address: str
    ssh: str | None  # user@host for a host reached over SSH, None for this machine

    def values(self, recipe: Recipe) -> dict[str, str]: ...

    def missing(self, recipe: Recipe, subject: AnySubject) -> str | None: ...

    def which(self, program: str) -> str | None: ...

    def cpus(self) -> list[int]: ...

    def origins(self, recipe: Recipe, subject: AnySubject) -> tuple[Origin, ...]: ...

    def environment(self, packages: list[str], tools: dict[str, list[str]]) -> Environment: ...

    def workroot(self) -> AbstractContextManager[Path]: ...

    def prepare(self, recipe: Recipe, subject: AnySubject, values: dict[str, str]) -> str: ...

    def render(self, recipe: Recipe, subject: AnySubject, values: dict[str, str]) -> dict[str, str]: ...

    def free_port(self) -> int: ...

    def start(
        self, launch: Launch, on_start: Callable[[RunningServer], None] | None
    ) -> AbstractContextManager[RunningServer]: ...

    def http_get(self, address: str, port: int, path: str) -> HttpReply: ...

    def keeps_http10_alive(self, address: str, port: int, path: str) -> bool: ...

    def accepts(self, address: str, port: int) -> bool: ...

    def run_tool(self, argv: list[str], cpu: int | None, timeout_s: float) -> ToolRun: ...

    def cpu_times(self, cpus: tuple[int, ...]) -> CpuTimes: ...


class LocalHost:
    """This machine: every operation is a direct call; servers listen on the loopback."""

    ssh: str | None = None

    def __init__(self, repo: Path, address: str = LOOPBACK) -> None:
        self.repo = repo
        self.address = address

    def values(self, recipe: Recipe) -> dict[str, str]:
        return base_values(recipe, self.address)

    def missing(self, recipe: Recipe, subject: AnySubject) -> str | None:
        return missing_requirement(recipe, subject, self.values(recipe))

    def which(self, program: str) -> str | None:
        return shutil.which(program)

    def cpus(self) -> list[int]:
        """The CPUs this process may run on (and so pin its children to)."""
        return sorted(os.sched_getaffinity(0))

    def origins(self, recipe: Recipe, subject: AnySubject) -> tuple[Origin, ...]:
        return subject_origins(subject, self.values(recipe), self.repo)

    def environment(self, packages: list[str], tools: dict[str, list[str]]) -> Environment:
        return collect_environment(self.repo, packages, tools)

    @contextmanager
    def workroot(self) -> Iterator[Path]:
        with tempfile.TemporaryDirectory(prefix="benchsite-") as name:
            path = Path(name)
            path.chmod(0o755)  # servers that drop privileges (nginx workers) must read their files
            yield path

    def prepare(self, recipe: Recipe, subject: AnySubject, values: dict[str, str]) -> str:
        """Make the subject's folder {workdir} and run its preparation command there (its output back)."""
        Path(values["workdir"]).mkdir(parents=True, exist_ok=True)
        return run_prepare(subject, values, recipe.directory)

    def render(self, recipe: Recipe, subject: AnySubject, values: dict[str, str]) -> dict[str, str]:
        rendered = render_templates(subject, recipe, values)
        write_files(Path(values["workdir"]), rendered)
        return rendered

    def free_port(self) -> int:
        return free_port(self.address)

    def start(
        self, launch: Launch, on_start: Callable[[RunningServer], None] | None
    ) -> AbstractContextManager[RunningServer]:
        return running_server(launch, on_start, self.address)

    def http_get(self, address: str, port: int, path: str) -> HttpReply:
        return http_get(port, path, address=address)

    def keeps_http10_alive(self, address: str, port: int, path: str) -> bool:
        return keeps_http10_alive(port, path, address=address)

    def accepts(self, address: str, port: int) -> bool:
        return accepts_connections(address, port)

    def run_tool(self, argv: list[str], cpu: int | None, timeout_s: float) -> ToolRun:
        return run_tool(argv, cpu, timeout_s)

    def cpu_times(self, cpus: tuple[int, ...]) -> CpuTimes:
        return cpu_times(cpus)


def write_files(directory: Path, files: dict[str, str]) -> None:
    """Write {relative name: text} under a directory."""
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)


@dataclass(frozen=True)
class Placement:
    """The host of each role; both are the same object when the run stays on one machine."""

    server: Host
    load: Host

    @property
    def one_machine(self) -> bool:
        return self.server is self.load

    def cpu_times(self, server_cpu: int | None, load_cpu: int | None) -> CpuTimes:
        """Busy and stolen time of the CPUs the figures depend on, on whichever host each one is."""
        if self.one_machine:
            return self.server.cpu_times(measured_cpus(server_cpu, load_cpu))
        return self.server.cpu_times(measured_cpus(server_cpu, None)) + self.load.cpu_times(
            measured_cpus(None, load_cpu)
        )


def on_this_machine(repo: Path) -> Placement:
    """Every role on this machine, servers on the loopback (the default)."""
    host = LocalHost(repo)
    return Placement(host, host)
