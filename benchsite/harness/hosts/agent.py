"""The project's agent on a host reached over SSH: the local operations of a run, one JSON line each.

Started by the controller in the project folder that `invoke hosts-setup` made on the host
(`.venv/bin/python -m benchsite.harness.hosts.agent --address ADDR`). It reads one request per line,
`{"id": N, "op": NAME, "args": {...}}`, and answers each with one line, `{"id": N, "ok": VALUE}` or
`{"id": N, "error": MESSAGE}` (a BenchError: the user's to fix) or `{"id": N, "refused": MESSAGE}`
(a network error of a probe: the caller may try again). While a request takes longer than a quarter of
the idle timeout, it also sends `{"id": N, "working": true}` that often, so that the controller can tell
a slow operation (a prepare step, a long ab) from a link gone silent.

Everything it starts lives only as long as its session: when its input ends (the controller
finished, was killed, or the connection was closed), when nothing, not even a heartbeat, came for
`--idle-timeout` seconds (a link that went silent), or when it gets SIGTERM/SIGHUP/SIGINT, it stops
every server it started (by PID, TERM then KILL, port freed) and removes its temporary folders.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import http.client
import json
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, TextIO

from benchsite.errors import BenchError
from benchsite.harness.basics.sync import sync_record
from benchsite.harness.builds.byo import search_path
from benchsite.harness.hosts.placement import LocalHost
from benchsite.harness.processes.processes import Launch, RunningServer, telling_lines
from benchsite.harness.processes.signals import signals_as_interrupt, signals_held, start_thread
from benchsite.model.recipe import AnySubject, Recipe, load_recipe

LOG_TAIL_BYTES = 64 * 1024
HEARTBEAT = "heartbeat"  # a request the controller sends while it waits on the other host; not answered


class Agent:
    """The operations of one session, on this host."""

    def __init__(self, repo: Path, address: str, stack: ExitStack) -> None:
        self.host = LocalHost(repo, address)
        self.repo = repo
        self.stack = stack
        self.logs = stack.enter_context(self.host.workroot())  # the servers' logs, gone with the session
        self.recipes: dict[str, Recipe] = {}
        self.servers: dict[int, tuple[RunningServer, ExitStack, Path]] = {}

    def recipe(self, name: str) -> Recipe:
        if name not in self.recipes:
            self.recipes[name] = load_recipe(name, self.repo / "recipes", self.repo / "conf")
        return self.recipes[name]

    def subject(self, recipe: str, subject: str) -> tuple[Recipe, AnySubject]:
        loaded = self.recipe(recipe)
        for each in loaded.subjects:
            if each.name == subject:
                return loaded, each
        raise BenchError(f"recipe {recipe} on this host has no subject {subject!r}: run `invoke hosts-setup` again")

    def synced(self) -> dict[str, Any] | None:
        return sync_record(self.repo)

    def values(self, recipe: str) -> dict[str, str]:
        return self.host.values(self.recipe(recipe))

    def missing(self, recipe: str, subject: str) -> str | None:
        return self.host.missing(*self.subject(recipe, subject))

    def origins(self, recipe: str, subject: str) -> list[dict[str, Any]]:
        return [origin.to_json() for origin in self.host.origins(*self.subject(recipe, subject))]

    def environment(self, packages: list[str], tools: dict[str, list[str]]) -> dict[str, Any]:
        return self.host.environment(packages, tools).to_json()

    def workroot(self) -> str:
        return str(self.stack.enter_context(self.host.workroot()))

    def prepare(self, recipe: str, subject: str, values: dict[str, str]) -> str:
        loaded, found = self.subject(recipe, subject)
        return self.host.prepare(loaded, found, values)

    def render(self, recipe: str, subject: str, values: dict[str, str]) -> dict[str, str]:
        loaded, found = self.subject(recipe, subject)
        return self.host.render(loaded, found, values)

    def free_port(self) -> int:
        return self.host.free_port()

    def which(self, program: str) -> str | None:
        return self.host.which(program)

    def cpus(self) -> list[int]:
        return self.host.cpus()

    def start(self, name: str, argv: list[str], port: int, cpu: int | None, cwd: str, tmpdir: str | None) -> int:
        own = ExitStack()
        log_path = self.logs / f"{name}-{port}.log"
        folder = None if tmpdir is None else Path(tmpdir)
        with signals_held():  # no interrupt between the spawn and the session's hold on the server
            launch = Launch(name=name, argv=argv, port=port, cpu=cpu, log_path=log_path, cwd=Path(cwd), tmpdir=folder)
            server = own.enter_context(self.host.start(launch, None))
            self.servers[server.pid] = (server, own, log_path)
            self.stack.push(own)  # stopped at the session's end unless stopped before
        return server.pid

    def _server(self, pid: int) -> RunningServer:
        if pid not in self.servers:
            raise BenchError(f"no server with PID {pid} was started by this agent")
        return self.servers[pid][0]

    def exit_code(self, pid: int) -> int | None:
        return self._server(pid).exit_code()

    def cpu(self, pid: int) -> dict[str, object]:
        return self._server(pid).tree_cpu().to_json()

    def memory(self, pid: int) -> dict[str, object] | None:
        peak = self._server(pid).tree_memory()
        return None if peak is None else peak.model_dump()

    def telling(self, pid: int) -> str:
        self._server(pid)
        return telling_lines(self.servers[pid][2])

    def stop(self, pid: int) -> str:
        """Stop one server (port freed) and return the end of its log."""
        self._server(pid)
        _, own, log_path = self.servers.pop(pid)
        own.close()
        with log_path.open("rb") as handle:
            handle.seek(max(0, log_path.stat().st_size - LOG_TAIL_BYTES))
            return handle.read().decode(errors="replace")

    def http_get(self, address: str, port: int, path: str) -> dict[str, Any]:
        reply = self.host.http_get(address, port, path)
        return {"status": reply.status, "headers": reply.headers, "body": base64.b64encode(reply.body).decode()}

    def keeps_http10_alive(self, address: str, port: int, path: str) -> bool:
        return self.host.keeps_http10_alive(address, port, path)

    def accepts(self, address: str, port: int) -> bool:
        return self.host.accepts(address, port)

    def run_tool(self, argv: list[str], cpu: int | None, timeout_s: float) -> dict[str, Any]:
        return dataclasses.asdict(self.host.run_tool(argv, cpu, timeout_s))

    def cpu_times(self, cpus: list[int]) -> list[float | str]:
        times = self.host.cpu_times(tuple(cpus))
        return [times.busy_s, times.steal_s, times.clock]


def answer(agent: Agent, request: dict[str, Any]) -> dict[str, Any]:
    """One request's reply line."""
    number = request.get("id")
    operation: Callable[..., Any] | None = getattr(agent, str(request.get("op")), None)
    if operation is None or str(request.get("op")).startswith("_"):
        return {"id": number, "error": f"this agent has no operation {request.get('op')!r}: sync the project again"}
    try:
        return {"id": number, "ok": operation(**request.get("args", {}))}
    except BenchError as error:
        return {"id": number, "error": str(error)}
    except (OSError, http.client.HTTPException) as error:
        return {"id": number, "refused": f"{type(error).__name__}: {error}"}


class Link:
    """The controller's side of the session, read in a thread: requests queue up, and a link silent for
    `idle_s` (no request, no heartbeat) counts as lost, like an input that ended."""

    def __init__(self, lines: Iterator[str], idle_s: float) -> None:
        self.requests: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.idle_s = idle_s
        self.heard = time.monotonic()
        start_thread(self._read, lines)
        start_thread(self._watch)

    def _read(self, lines: Iterator[str]) -> None:
        for line in lines:
            self.heard = time.monotonic()
            request = json.loads(line)
            if request.get("op") != HEARTBEAT:
                self.requests.put(request)
        self.requests.put(None)  # the input ended: the controller finished, died or dropped the connection

    def _watch(self) -> None:
        while time.monotonic() - self.heard < self.idle_s:
            time.sleep(min(1.0, self.idle_s / 4))
        os.kill(os.getpid(), signal.SIGTERM)  # the main thread stops everything, as for any signal


class Replies:
    """The lines to the controller, one writer at a time: the replies, and the "working" lines of a request
    that takes long."""

    def __init__(self, out: TextIO, every_s: float) -> None:
        self.out, self.every_s = out, every_s
        self.writing = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        with self.writing:
            print(json.dumps(message), file=self.out, flush=True)

    @contextmanager
    def working_on(self, number: object) -> Iterator[None]:
        """While the block runs, a "working" line every `every_s`."""
        done = threading.Event()

        def beacon() -> None:
            while not done.wait(self.every_s):
                try:
                    self.send({"id": number, "working": True})
                except OSError:  # the controller is gone: the main thread finds out on its reply
                    return

        thread = start_thread(beacon)
        try:
            yield
        finally:
            done.set()
            thread.join()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True, help="the address this host's servers listen on")
    parser.add_argument("--idle-timeout", type=float, default=60.0, help="seconds of silence that end the session")
    options = parser.parse_args()
    repo = Path.cwd()
    os.environ["PATH"] = search_path(repo)  # programs built by `invoke byo` come first, as on the controller
    out = sys.stdout
    try:
        with signals_as_interrupt(), ExitStack() as stack:
            agent = Agent(repo, options.address, stack)
            link = Link(iter(sys.stdin), options.idle_timeout)
            replies = Replies(out, options.idle_timeout / 4)
            replies.send({"ready": os.getpid()})
            while (request := link.requests.get()) is not None:
                with replies.working_on(request.get("id")):
                    reply = answer(agent, request)
                replies.send(reply)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the controller is gone: the ExitStack above has stopped everything
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
