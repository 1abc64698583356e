"""A host reached over SSH with Fabric: the project's agent runs there and does each operation.

One SSH connection per host and one agent session on it for the whole run. Everything the agent
starts ends with its session: a finished run, Ctrl-C, a killed harness or a lost connection close
the session's input and the agent stops its servers by PID (see `benchsite.harness.hosts.agent`).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import select
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import paramiko
from fabric import Connection

from benchsite.errors import BenchError
from benchsite.harness.basics.machine import CpuTimes
from benchsite.harness.basics.probes import HttpReply
from benchsite.harness.basics.sync import project_digest, project_files
from benchsite.harness.hosts.agent import HEARTBEAT
from benchsite.harness.hosts.placement import Host, LocalHost, Placement, on_this_machine
from benchsite.harness.processes.commands import ToolRun
from benchsite.harness.processes.cputime import CpuReading
from benchsite.harness.processes.processes import Launch, RunningServer
from benchsite.harness.processes.signals import pause_for_test, signals_held, start_thread
from benchsite.model.hosts import HostEntry, Hosts
from benchsite.model.recipe import AnySubject, Recipe
from benchsite.model.run import Environment, Origin
from benchsite.tools.memory import MemoryPeak

# paramiko logs a failed handshake with its traceback from its own thread; the harness says what went wrong
# in one line (`connect`), so paramiko's records go nowhere unless a user configures logging.
logging.getLogger("paramiko").addHandler(logging.NullHandler())

CONNECT_TIMEOUT_S = 10
KEEPALIVE_INTERVAL_S = 15
SETUP_HINT = "run `.venv/bin/invoke hosts-setup --hosts ...` for it first"


def link_timeout_s() -> float:
    """How long a silent link may last before either side counts it as lost (the agent then stops its
    servers; the harness says the connection was lost). BENCHSITE_LINK_TIMEOUT_S changes it (tests)."""
    return float(os.environ.get("BENCHSITE_LINK_TIMEOUT_S", "60"))


def connect(entry: HostEntry, role: str) -> Connection:
    """An open SSH connection to a role's host; an unreachable host is a one-line error."""
    connect_kwargs: dict[str, Any] = {"key_filename": entry.identity} if entry.identity else {}
    connection = Connection(
        entry.hostname,
        user=entry.user,
        port=entry.port,
        connect_timeout=CONNECT_TIMEOUT_S,
        connect_kwargs=connect_kwargs,
    )
    try:
        connection.open()
    except (OSError, paramiko.SSHException) as error:
        reason = str(error) or type(error).__name__
        raise BenchError(
            f"cannot reach the {role} host {entry.ssh} over SSH ({reason}): check the address, that sshd "
            "runs there and that your key is accepted (ssh " + entry.ssh + " true)"
        ) from None
    transport = connection.client.get_transport()
    if transport is not None:
        transport.set_keepalive(KEEPALIVE_INTERVAL_S)  # a dead link is noticed, not waited on forever
    return connection


class AgentSession:
    """The agent on a host: one request line out, one reply line back, matched by number.

    An interrupt (Ctrl-C, SIGTERM...) only ever lands between paramiko's calls: each send and each
    read of data already there runs with the signals held, and the waits in between are select()s
    on the channel. (The session must be opened with the signals held, so that paramiko's own threads
    never take one.)"""

    def __init__(self, connection: Connection, entry: HostEntry, role: str) -> None:
        self.entry, self.role = entry, role
        transport = connection.client.get_transport()
        if transport is None:
            raise BenchError(f"the SSH connection to the {role} host {entry.ssh} closed")
        self.channel = transport.open_session()
        self.timeout_s = link_timeout_s()
        self.number = 0
        self.pending = b""
        self.writing = threading.Lock()
        self.closed = threading.Event()
        self.lost = False
        command = (
            f"cd {shlex.quote(entry.dir)} && exec .venv/bin/python -m benchsite.harness.hosts.agent "
            f"--address {shlex.quote(entry.listen_address)} --idle-timeout {self.timeout_s:g}"
        )
        self.channel.settimeout(self.timeout_s + CONNECT_TIMEOUT_S)
        self.channel.exec_command(command)
        try:
            self._line(time.monotonic() + self.timeout_s + CONNECT_TIMEOUT_S)
        except (OSError, EOFError, paramiko.SSHException):
            stderr = self.channel.recv_stderr(65536).decode(errors="replace").strip().splitlines()
            raise BenchError(
                f"the {role} host {entry.ssh} has no working project in {entry.dir} "
                f"({stderr[-1] if stderr else 'the agent did not start'}): {SETUP_HINT}"
            ) from None
        start_thread(self._heartbeat)

    def _heartbeat(self) -> None:
        """Tell the agent the link is alive while the harness waits on the other host."""
        while not self.closed.wait(self.timeout_s / 4):
            try:
                self._send({"op": HEARTBEAT})
            except (OSError, EOFError, paramiko.SSHException):
                return

    def _send(self, request: dict[str, Any]) -> None:
        with self.writing, signals_held():
            self.channel.sendall((json.dumps(request) + "\n").encode())

    def _line(self, deadline: float) -> bytes:
        """The next line from the agent, waiting until the deadline at most."""
        while b"\n" not in self.pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no reply in time")
            if not self.channel.recv_ready():
                if self.channel.closed or self.channel.eof_received:
                    raise EOFError
                select.select([self.channel], [], [], min(remaining, 1.0))
                continue
            with signals_held():
                chunk = self.channel.recv(65536)
            if not chunk:
                raise EOFError
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line

    def call(self, op: str, wait_s: float = 0.0, **args: Any) -> Any:
        """Run one operation on the host and return its value; its BenchError becomes ours. The connection
        is lost when nothing comes for the link timeout (the agent says "working" more often than that
        while an operation takes long), or when the reply takes longer than the link timeout plus `wait_s`,
        the operation's own longest duration."""
        if self.lost:
            raise BenchError(self._lost())
        self.number += 1
        pause_for_test(f"agent-{op}")
        heard = time.monotonic()
        deadline = heard + self.timeout_s + wait_s
        try:
            self._send({"id": self.number, "op": op, "args": args})
            while True:  # replies to requests an interrupt abandoned are skipped, as are "working" lines
                reply = json.loads(self._line(min(deadline, heard + self.timeout_s)))
                heard = time.monotonic()
                if reply.get("id") == self.number and not reply.get("working"):
                    break
        except (OSError, EOFError, paramiko.SSHException):  # TimeoutError is an OSError
            self.lost = True
            raise BenchError(self._lost()) from None
        if "error" in reply:
            raise BenchError(f"on the {self.role} host {self.entry.ssh}: {reply['error']}")
        if "refused" in reply:
            raise ConnectionError(reply["refused"])
        return reply["ok"]

    def _lost(self) -> str:
        return (
            f"lost the connection to the {self.role} host {self.entry.ssh}: its agent stops what it started "
            "when the connection drops; run the recipe again"
        )

    def close(self, timeout_s: float = 30.0) -> None:
        """End the session: the agent stops whatever is still running and exits."""
        self.closed.set()
        try:
            with signals_held():
                if not self.lost:
                    self.channel.shutdown_write()
                    self.channel.status_event.wait(timeout_s)
                self.channel.close()
        except (OSError, EOFError, paramiko.SSHException):
            pass  # a dropped connection ends the agent's session all the same


@dataclass
class RemoteServer:
    """A server the agent of a host started; its log comes back into the run when it stops."""

    session: AgentSession
    name: str
    argv: list[str]
    port: int
    pid: int
    cwd: Path

    def exit_code(self) -> int | None:
        code = self.session.call("exit_code", pid=self.pid)
        return None if code is None else int(code)

    def tree_cpu(self) -> CpuReading:
        return CpuReading.from_json(self.session.call("cpu", pid=self.pid))

    def tree_memory(self) -> MemoryPeak | None:
        reading = self.session.call("memory", pid=self.pid)
        return None if reading is None else MemoryPeak.model_validate(reading)

    def memory_sampler(self, cpu: int | None, every_s: float | None) -> None:
        """None: the agent answers one call at a time, so a repetition on another host records no peak."""
        return None

    def telling(self) -> str:
        return str(self.session.call("telling", pid=self.pid))

    def by_hand(self) -> str:
        entry = self.session.entry
        command = f"cd {shlex.quote(str(self.cwd))} && {shlex.join(self.argv)}"
        target = f"{entry.user}@{entry.hostname}" if entry.user else entry.hostname
        return f"ssh {f'-p {entry.port} ' if entry.port else ''}{target} {shlex.quote(command)}"


class RemoteHost:
    """A role's host over SSH: the Host operations, each done by the project's agent there."""

    def __init__(self, entry: HostEntry, role: Literal["server", "load"]) -> None:
        self.entry, self.role = entry, role
        self.ssh: str | None = entry.ssh
        self.address = entry.listen_address
        with signals_held():  # paramiko's threads inherit the held signals: only the main thread takes them
            self.connection = connect(entry, role)
            try:
                self.session = AgentSession(self.connection, entry, role)
            except BaseException:
                self.connection.close()
                raise

    def close(self) -> None:
        try:
            self.session.close()
        finally:
            with signals_held():
                self.connection.close()

    def check_current(self, digest: str) -> None:
        """Refuse a host whose copy of the project differs from this one: its servers would run other code."""
        record = self.session.call("synced")
        if record is None or record.get("digest") != digest:
            raise BenchError(
                f"the {self.role} host {self.ssh} has another copy of the project than this one in {self.entry.dir} "
                "(a file changed here since it was synced): run `.venv/bin/invoke hosts-setup --hosts ...` again"
            )

    def values(self, recipe: Recipe) -> dict[str, str]:
        return dict(self.session.call("values", recipe=recipe.name))

    def missing(self, recipe: Recipe, subject: AnySubject) -> str | None:
        found = self.session.call("missing", wait_s=120, recipe=recipe.name, subject=subject.name)
        return None if found is None else f"{found} (on the {self.role} host)"  # stored: no login

    def which(self, program: str) -> str | None:
        found = self.session.call("which", program=program)
        return None if found is None else str(found)

    def cpus(self) -> list[int]:
        return [int(cpu) for cpu in self.session.call("cpus")]

    def origins(self, recipe: Recipe, subject: AnySubject) -> tuple[Origin, ...]:
        found = self.session.call("origins", wait_s=60, recipe=recipe.name, subject=subject.name)
        return tuple(Origin.from_json(each, f"the {self.role} host's agent") for each in found)

    def environment(self, packages: list[str], tools: dict[str, list[str]]) -> Environment:
        found = self.session.call("environment", wait_s=120, packages=packages, tools=tools)
        return Environment.from_json(found, f"the {self.role} host's agent")

    @contextmanager
    def workroot(self) -> Iterator[Path]:
        yield Path(self.session.call("workroot"))  # removed by the agent when its session ends

    def prepare(self, recipe: Recipe, subject: AnySubject, values: dict[str, str]) -> str:
        return str(self.session.call("prepare", wait_s=300, recipe=recipe.name, subject=subject.name, values=values))

    def render(self, recipe: Recipe, subject: AnySubject, values: dict[str, str]) -> dict[str, str]:
        return dict(self.session.call("render", recipe=recipe.name, subject=subject.name, values=values))

    def free_port(self) -> int:
        return int(self.session.call("free_port"))

    def start(
        self, launch: Launch, on_start: Callable[[RunningServer], None] | None
    ) -> AbstractContextManager[RunningServer]:
        return self._running(launch)

    @contextmanager
    def _running(self, launch: Launch) -> Iterator[RunningServer]:
        folder = None if launch.tmpdir is None else str(launch.tmpdir)
        name, argv, port, cwd = launch.name, launch.argv, launch.port, launch.cwd
        pid = int(
            self.session.call("start", name=name, argv=argv, port=port, cpu=launch.cpu, cwd=str(cwd), tmpdir=folder)
        )
        try:
            yield RemoteServer(session=self.session, name=name, argv=argv, port=port, pid=pid, cwd=cwd)
        finally:
            log = self.session.call("stop", wait_s=30, pid=pid)
            launch.log_path.parent.mkdir(parents=True, exist_ok=True)
            launch.log_path.write_text(log)

    def http_get(self, address: str, port: int, path: str) -> HttpReply:
        found = self.session.call("http_get", address=address, port=port, path=path)
        headers = [(str(key), str(value)) for key, value in found["headers"]]
        return HttpReply(int(found["status"]), headers, base64.b64decode(found["body"]))

    def keeps_http10_alive(self, address: str, port: int, path: str) -> bool:
        return bool(self.session.call("keeps_http10_alive", address=address, port=port, path=path))

    def accepts(self, address: str, port: int) -> bool:
        return bool(self.session.call("accepts", address=address, port=port))

    def run_tool(self, argv: list[str], cpu: int | None, timeout_s: float) -> ToolRun:
        found = self.session.call("run_tool", wait_s=timeout_s + 30, argv=argv, cpu=cpu, timeout_s=timeout_s)
        return ToolRun(**found)

    def cpu_times(self, cpus: tuple[int, ...]) -> CpuTimes:
        busy, steal, clock = self.session.call("cpu_times", cpus=list(cpus))
        return CpuTimes(float(busy), float(steal), "cpuacct" if clock == "cpuacct" else "ticks")


def reachable(entry: HostEntry, role: str) -> None:
    """Fail with one line, before anything starts, if a host cannot be reached."""
    connect(entry, role).close()


@contextmanager
def placed(hosts: Hosts, repo: Path) -> Iterator[Placement]:
    """The run's placement: each role given in `hosts` on its host over SSH, the others here.

    Every host is reached (and its agent started) before anything runs; leaving the block ends
    every agent session, which stops whatever each one still runs."""
    if not hosts.remote:
        yield on_this_machine(repo)
        return
    digest = project_digest(repo, project_files(repo))
    with ExitStack() as stack:
        opened: dict[str, Host] = {}
        for role, entry in hosts.roles().items():
            remote = RemoteHost(entry, role)
            stack.callback(remote.close)
            remote.check_current(digest)
            opened[role] = remote
        local = LocalHost(repo)
        yield Placement(opened.get("server", local), opened.get("load", local))
