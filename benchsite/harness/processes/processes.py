"""Process lifecycles: start pinned in a group of its own, stop, free the port; run a load tool; run set-up
commands side by side."""

from __future__ import annotations

import ctypes
import os
import resource
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import psutil

from benchsite.errors import BenchError
from benchsite.harness.processes import cgroups
from benchsite.harness.processes.cputime import CpuReading, tree_reading
from benchsite.harness.processes.guardian import guarded, unguarded
from benchsite.harness.processes.marks import MARK_ENV, marked, new_mark
from benchsite.harness.processes.members import adopt_orphans, adopted, group_of, server_processes, still_running
from benchsite.harness.processes.memory import PeakSampler, process_of, tree_memory
from benchsite.harness.processes.signals import pause_for_test, signal_for_test, signals_held, unblock_in_child
from benchsite.tools.memory import MemoryPeak, as_peak

LOOPBACK = "127.0.0.1"
POLL_INTERVAL_S = 0.05


_LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when the thread that made it dies


def _die_with(parent: int) -> None:
    """In a child between fork and exec: be sent SIGTERM when the harness dies, however it dies (a SIGKILL,
    the OOM killer, a CI time-out); TERM, not KILL, so that a server stops its own workers. If the harness
    is already gone, stop now."""
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def prepare_child(cpu: int | None, cgroup: Path | None = None) -> Callable[[], None]:
    """A preexec function: die with the harness, enter its cgroup (a server's, where it has one), pin the child
    (and so its children) to one CPU, and lift its open-files soft limit to the hard limit (ab and servers need
    >1000 sockets at -c 1000)."""
    parent = os.getpid()

    def prepare() -> None:
        _die_with(parent)
        if cgroup is not None:
            cgroups.enter(cgroup)
        unblock_in_child()  # the parent may hold its signals back while it registers this child
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    return prepare


def free_port(address: str = LOOPBACK) -> int:
    """A TCP port on the address (the loopback by default) that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int, address: str = LOOPBACK) -> bool:
    """True when a server could bind address:port (TIME_WAIT does not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError:
            return False
        return True


def wait_for_free_port(port: int, timeout_s: float = 10.0, address: str = LOOPBACK) -> bool:
    """Poll until the port can be bound again; False if it is still taken at the deadline."""
    deadline = time.monotonic() + timeout_s
    while not port_is_free(port, address):
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_INTERVAL_S)
    return True


def telling_lines(path: Path, count: int = 3) -> str:
    """The lines of a log that say why a server stopped, joined with ' | ' for a one-line message: any
    line naming an error (the real cause is often early, before a long traceback), then the last ones."""
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    errors = [line for line in lines if "error" in line.lower() and not line.startswith("Traceback")][:2]
    return " | ".join(dict.fromkeys([*errors, *lines[-count:]]))


def by_hand(server: ServerProcess) -> str:
    """The command that reproduces a server's start, from the folder it ran in."""
    return f"cd {shlex.quote(str(server.cwd))} && {shlex.join(server.argv)}"


class RunningServer(Protocol):
    """A started subject, on this machine or another: what a run asks of it."""

    name: str
    argv: list[str]
    port: int

    @property
    def pid(self) -> int: ...

    def exit_code(self) -> int | None: ...

    def tree_cpu(self) -> CpuReading: ...

    def tree_memory(self) -> MemoryPeak | None: ...

    def memory_sampler(self, cpu: int | None, every_s: float | None) -> PeakSampler | None: ...

    def telling(self) -> str: ...

    def by_hand(self) -> str: ...


@dataclass(frozen=True)
class Launch:
    """What starts one server: its name, its command, its port, the CPU it is pinned to (None: any), its log, the
    folder it starts in, and where its temporary files go (None: the system's)."""

    name: str
    argv: list[str]
    port: int
    cpu: int | None
    log_path: Path
    cwd: Path
    tmpdir: Path | None = None


@dataclass
class ServerProcess:
    """A subject's server started by us: its process group, and every process carrying its mark, are ours to
    stop."""

    name: str
    argv: list[str]
    port: int
    popen: subprocess.Popen[bytes]
    log_path: Path
    cwd: Path
    mark: str  # its cgroup's name and the mark in its processes' environment (marks.py)
    started_at: float = 0.0  # when it started, as psutil's create_time says: what it may have left since is its

    @property
    def pid(self) -> int:
        return self.popen.pid

    def telling(self) -> str:
        """The lines of its log that say why it stopped."""
        return telling_lines(self.log_path)

    def by_hand(self) -> str:
        return by_hand(self)

    def exit_code(self) -> int | None:
        return self.popen.poll()

    def tree_cpu(self) -> CpuReading:
        """The CPU time of the server and its live children."""
        return tree_reading(self.pid)

    def tree_memory(self) -> MemoryPeak | None:
        """USS and PSS of the server and its live children, now (None: it has exited: unknown, never 0)."""
        if self.popen.poll() is not None:
            return None
        root = process_of(self.pid)
        sample = tree_memory(root) if root is not None else None
        return as_peak([sample] if sample else [])

    def memory_sampler(self, cpu: int | None, every_s: float | None) -> PeakSampler | None:
        """A sampler of its tree's peak memory over a repetition, run on `cpu` (every_s: see PeakSampler); None
        once it has exited."""
        if self.popen.poll() is not None:
            return None
        return PeakSampler(self.pid, cpu, every_s)


def start_server(launch: Launch) -> ServerProcess:
    """Start a server in a new process group, pinned, with its output in a log file and a mark of its own in its
    environment; with `tmpdir`, its temporary files go there (TMPDIR), so nothing of it outlives the run's folder
    (Cherokee makes one)."""
    name, argv, port, cpu, log_path, cwd, tmpdir = (
        launch.name,
        launch.argv,
        launch.port,
        launch.cpu,
        launch.log_path,
        launch.cwd,
        launch.tmpdir,
    )
    mark = new_mark()
    started_at = time.time() - 1.0  # until its process says (psutil's start times are read to a second's boot time)
    cgroup = cgroups.make(mark)
    adopt_orphans()
    env = {**os.environ, MARK_ENV: mark, **({"TMPDIR": str(tmpdir)} if tmpdir is not None else {})}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        try:
            popen = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                process_group=0,
                preexec_fn=prepare_child(cpu, cgroup),
            )
        except (OSError, subprocess.SubprocessError) as error:
            cgroups.remove(mark)
            raise BenchError(
                f"cannot start subject {name!r} ({argv[0]}): {getattr(error, 'strerror', error)}"
            ) from None
    guarded(popen, mark)
    with suppress(psutil.Error):  # its start on the kernel's clock, which its processes' start times are on
        started_at = psutil.Process(popen.pid).create_time()
    return ServerProcess(
        name=name, argv=argv, port=port, popen=popen, log_path=log_path, cwd=cwd, mark=mark, started_at=started_at
    )


@dataclass
class StoppedTally:
    """The servers this process stopped, and how many processes they had: what an interrupt's line says."""

    servers: int = 0
    processes: int = 0

    def said(self) -> str:
        if not self.servers:
            return "no server of this task was running on this machine"
        servers = "the server" if self.servers == 1 else f"the {self.servers} servers"
        return f"stopped {servers} this task started ({self.processes} processes in all), none left running"


STOPPED = StoppedTally()


def stop_process_group(popen: subprocess.Popen[Any], term_timeout_s: float = 15.0) -> None:
    """TERM the group (again each TERM_AGAIN_S), then KILL whatever of it is left at term_timeout_s; never
    touches other processes. A signal that comes meanwhile is delivered once the group is gone: an interrupt
    never leaves a server half stopped."""
    stop_process_groups([popen], term_timeout_s)


def stop_servers(servers: Sequence[ServerProcess], term_timeout_s: float = 15.0) -> None:
    """Stop servers side by side, each with its group and every process carrying its mark (a daemon that left
    the group included), and count them in STOPPED."""
    popens = [server.popen for server in servers]
    since = min((server.started_at for server in servers), default=None)
    stop_process_groups(popens, term_timeout_s, tuple(server.mark for server in servers), since)


def stop_process_groups(
    popens: Sequence[subprocess.Popen[Any]],
    term_timeout_s: float = 15.0,
    marks: Sequence[str] = (),
    since: float | None = None,
) -> None:
    """Stop several groups as stop_process_group stops one, side by side: a run's servers take as long to
    stop as the slowest of them, not as all of them together; with `marks`, every process in their cgroups or
    carrying one too (and, `since` their start where they have no cgroup, what this process adopted)."""
    with signals_held():
        _stop_process_groups(popens, term_timeout_s, marks, since)
    for mark in marks:
        cgroups.remove(mark)


# A server can lose a TERM that comes while it starts: uWSGI, stopped by an interrupt during its start on a
# second host, then sat out the whole 15 s in 6 of 36 interrupts. The TERM is sent again each second.
TERM_AGAIN_S = 1.0


def _stop_process_groups(
    popens: Sequence[subprocess.Popen[Any]], term_timeout_s: float, marks: Sequence[str], since: float | None
) -> None:
    found = {mark: marked(mark) for mark in marks}
    STOPPED.servers += sum(1 for procs in found.values() if procs)
    STOPPED.processes += sum(len(procs) for procs in found.values())
    members = {
        proc.pid: proc for proc in [*(p for popen in popens for p in group_of(popen)), *server_processes(marks, since)]
    }
    deadline = time.monotonic() + term_timeout_s
    termed_at: dict[int, float] = {}
    while time.monotonic() < deadline:
        running = [popen for popen in popens if popen.poll() is None]
        strays = [proc for proc in server_processes(marks, since) if proc.pid not in {popen.pid for popen in running}]
        members.update((proc.pid, proc) for proc in strays)
        if not running and not strays:
            break
        for popen in running:
            last = termed_at.get(popen.pid)
            if last is None or time.monotonic() - last >= TERM_AGAIN_S:
                termed_at[popen.pid] = time.monotonic()
                try:
                    os.killpg(popen.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
                signal_for_test("server-stopping")
        if not running:  # the groups are gone; what carries a mark still is a daemon that left them
            for proc in strays:
                last = termed_at.get(proc.pid)
                if last is None or time.monotonic() - last >= TERM_AGAIN_S:
                    termed_at[proc.pid] = time.monotonic()
                    with suppress(psutil.NoSuchProcess):
                        proc.terminate()
        time.sleep(POLL_INTERVAL_S / 5 if not strays else POLL_INTERVAL_S)
    alive = still_running([*members.values(), *server_processes(marks, since)], timeout_s=0.5)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    still_running(alive, timeout_s=5)
    if since is not None:
        adopted(since)  # reaps what of them ended as this process's adopted children
    for popen in popens:
        if popen.poll() is None:
            popen.kill()
            popen.wait()
        unguarded(popen)


@contextmanager
def running_server(
    launch: Launch, on_start: Callable[[ServerProcess], None] | None = None, address: str = LOOPBACK
) -> Iterator[ServerProcess]:
    """Start a server and stop it on every way out, leaving its port free.

    `on_start` runs right after the spawn, signals still held (the runner records the PID there,
    so that even a SIGKILL of the harness leaves the server findable)."""
    port = launch.port
    if not port_is_free(port, address):
        raise BenchError(
            f"port {port} on {address} is already in use: stop whatever listens there "
            f"or set port = 0 (a free port) in the recipe's conf file"
        )
    server: ServerProcess | None = None
    port_freed = True
    try:
        with signals_held():  # an interrupt now is delivered once the server is ours to stop
            server = start_server(launch)
            if on_start is not None:
                on_start(server)
            signal_for_test("server-started")
            pause_for_test("server-started")
        yield server
    finally:
        if server is not None:
            stop_servers([server])
            port_freed = wait_for_free_port(port, address=address)
    if not port_freed:
        raise BenchError(f"port {port} is still bound after stopping {launch.name!r}: look for a stray process")
