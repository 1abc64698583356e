"""Starting the subjects: each on the server host, probed and verified from the load host before any load.

A subject that fails to start or answers wrongly costs only its own row; the run goes on with the others.
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.basics.probes import HttpReply, wait_until_accepting, wait_until_ready
from benchsite.harness.processes.processes import Launch, RunningServer, ServerProcess, stop_servers
from benchsite.harness.processes.signals import signals_held
from benchsite.harness.session.context import HttpServerSubject, Plan, RunContext, Started
from benchsite.harness.session.leftovers import record_owner
from benchsite.harness.session.memory import kept_reading
from benchsite.model.conf import Settings
from benchsite.model.recipe import Backend, Client, HttpSubject, Server
from benchsite.model.run import SkippedSubject, Verification
from benchsite.results.store import write_text
from benchsite.tools.memory import MemoryPeak


def verify_reply(subject: HttpSubject, reply: HttpReply) -> None:
    """Check status, exact body and headers before any load; a mismatch stops the run."""
    expect = subject.expect
    problems = []
    if reply.status != expect.status:
        problems.append(f"status {reply.status} (expected {expect.status})")
    if expect.body_bytes is not None and reply.body != expect.body_bytes:
        problems.append(f"body {reply.body[:60]!r} (expected {expect.body_bytes!r})")
    for name, value in sorted(expect.headers.items()):
        if reply.header(name) != value:
            problems.append(f"header {name}: {reply.header(name)!r} (expected {value!r})")
    if problems:
        raise BenchError(
            f"subject {subject.name!r} answered GET {subject.path} with {'; '.join(problems)}: "
            f"fix the subject before measuring it"
        )


def verification(reply: HttpReply) -> Verification:
    return Verification(
        status=reply.status,
        headers=tuple(reply.headers),
        body=reply.body[:500].decode(errors="replace"),
        body_bytes=len(reply.body),
    )


LOG_TAIL_BYTES = 64 * 1024


def trim_logs(directory: Path) -> None:
    """Keep the last 64 KiB of each server log: the end says why a server stopped; access logs add megabytes."""
    for log in directory.glob("*.log"):
        size = log.stat().st_size
        if size > LOG_TAIL_BYTES:
            with log.open("rb") as handle:
                handle.seek(size - LOG_TAIL_BYTES)
                tail = handle.read()
            log.write_bytes(
                f"[harness] the first {size - LOG_TAIL_BYTES} bytes of this log were dropped\n".encode() + tail
            )


def start_subjects(
    context: RunContext, subjects: list[HttpServerSubject], seed: int | None = None, number: int = 1
) -> list[SkippedSubject]:
    """Start, probe and verify each subject on the server host into `context.started`; one that fails costs only
    its own row (the others run), returned. A run's start `number` after the first starts them in the first one's
    folder (`context.workroot`); `seed` is their PYTHONHASHSEED (None: Python's own)."""
    failed: list[SkippedSubject] = []
    hosts, settings, reporter = context.hosts, context.settings, context.reporter
    host = hosts.server
    if context.workroot is None:
        context.workroot = context.stack.enter_context(host.workroot())
        if hosts.one_machine:
            record_owner(context.run_dir, workroot=context.workroot)
    ports: dict[str, str] = {}  # port_<subject>: later subjects' configs reach earlier ones (backends)
    base = host.values(context.recipe)
    for offset, subject in enumerate(subjects):
        port = settings.port + offset if settings.port else host.free_port()
        workdir = context.workroot / subject.name
        values = {**base, **ports, "port": str(port), "port2": str(host.free_port()), "workdir": str(workdir)}
        ports[f"port_{subject.name.replace('-', '_')}"] = str(port)
        reporter.status(f"starting {subject.label} on port {port}")
        try:
            log_name = subject.name if number == 1 else f"{subject.name}-start{number}"
            context.started[subject.name] = start_one(
                context, subject, values, StartHow(wrap=hash_seeded(seed), log_name=log_name)
            )
        except BenchError as error:
            failed.append(
                SkippedSubject(name=subject.name, label=subject.label, reason=FAILED_AT_START, detail=str(error))
            )
            reporter.step(f"{subject.label}: did not start ({error})")
    return failed


FAILED_AT_START = "it did not start or did not answer correctly on this machine"


def hash_seeded(seed: int | None) -> tuple[str, ...]:
    """The command that runs a server with a given PYTHONHASHSEED (None: none, Python picks its own)."""
    return () if seed is None else ("env", f"PYTHONHASHSEED={seed}")


def restart_subjects(context: RunContext, number: int, seed: int) -> None:
    """Stop the running subjects and start them again, in place in `context.started`, as start `number` with its
    hash seed, in the first start's folder. A subject that started before and not now stops the run (its rounds
    would lose their pairs)."""
    subjects = [each.subject for each in context.started.values()]
    stop_side_by_side(context.started)
    context.started.clear()
    failed = start_subjects(context, subjects, seed, number)
    if failed:
        raise BenchError(f"{failed[0].label} did not start again for start {number}: {failed[0].detail}")


def stop_side_by_side(started: dict[str, Started]) -> None:
    """Stop the subjects started on this machine all at once; each one's own clean-up then finds it stopped
    and checks its port. (A server host's agent stops its own one by one.)"""
    stop_servers([s.server for s in started.values() if isinstance(s.server, ServerProcess)])


@dataclass(frozen=True)
class StartHow:
    """How one subject is started: under a program that runs it (`wrap`, such as valgrind), with its log named,
    with other settings than the run's (a slower start's time-out), and into another stack than the run's."""

    wrap: tuple[str, ...] = ()
    log_name: str = ""
    settings: Settings | None = None
    stack: ExitStack | None = None


def start_one(context: RunContext, subject: HttpServerSubject, values: dict[str, str], how: StartHow) -> Started:
    """One subject started on the server host (its command after `how.wrap`), probed and verified from the load
    host; stopped again at once if any of it fails."""
    hosts, run_dir, recipe, wrap = context.hosts, context.run_dir, context.recipe, how.wrap
    settings, stack, log_name = how.settings or context.settings, how.stack or context.stack, how.log_name
    host, load, address = hosts.server, hosts.load, hosts.server.address
    port = int(values["port"])
    prepared = host.prepare(recipe, subject, values)
    if subject.prepare:
        write_text(run_dir / "logs" / f"{subject.name}-prepare.log", prepared)
    for target, text in host.render(recipe, subject, values).items():
        write_text(run_dir / "configs" / subject.name / target, text)
    argv = [*wrap, *subject.command(values)]
    on_start = (lambda started: record_owner(run_dir, server=started)) if hosts.one_machine else None
    with ExitStack() as own:
        with signals_held():  # no interrupt between the spawn and the registration for clean-up
            launch = Launch(
                name=subject.name,
                argv=argv,
                port=port,
                cpu=settings.server_cpu,
                log_path=run_dir / "logs" / f"{log_name or subject.name}.log",
                cwd=Path(values["recipe_dir"]),
                tmpdir=Path(values["workdir"]),
            )
            server = own.enter_context(host.start(launch, on_start))
        if isinstance(subject, Backend) and subject.probe == "tcp":
            wait_until_accepting(server, lambda: load.accepts(address, port), settings.start_timeout_s)
            reply, alive = None, None
        else:
            wait_until_ready(server, lambda: load.http_get(address, port, subject.path), settings.start_timeout_s)
            reply = load.http_get(address, port, subject.path)  # a fresh request, checked before any load
            verify_reply(subject, reply)
            alive = load.keeps_http10_alive(address, port, subject.path)
        idle = settled_memory(server)
        kept = None if wrap else kept_reading(idle, run_dir, subject.name)  # under a wrapper: not the server's own
        found = Started(
            subject=subject,
            server=server,
            reply=reply,
            keeps_http10_alive=alive,
            values=values,
            idle_memory=idle if not wrap else None,
            idle_memory_output=kept,
        )
        with signals_held():
            stack.push(own.pop_all())  # from here the run's own clean-up stops it
    return found


def settled_memory(server: RunningServer, within_s: float = 3.0) -> MemoryPeak | None:
    """Its tree's memory once the tree stops changing: a forking server answers before every worker has loaded
    its application (the same processes and USS within 1 % two readings running, READ_EVERY_S apart; at most
    `within_s`, then the last reading)."""
    deadline = time.monotonic() + within_s
    last = server.tree_memory()
    while last is not None and time.monotonic() < deadline:
        time.sleep(READ_EVERY_S)
        now = server.tree_memory()
        if now is None or (
            now.processes == last.processes and abs(now.uss_bytes - last.uss_bytes) <= last.uss_bytes / 100
        ):
            return now or last
        last = now
    return last


READ_EVERY_S = 0.2


def without_failed(
    plan: Plan, started: dict[str, Started], failed: list[SkippedSubject]
) -> tuple[Plan, list[SkippedSubject]]:
    """The plan without the subjects that did not start (clients too, where no backend started);
    a run in which no measured subject started is an error naming the first failure."""
    failed = list(failed)
    backend_up = any(isinstance(s.subject, Backend) for s in started.values())
    kept: Plan = []
    for subject, cells in plan:
        if isinstance(subject, Client) and not backend_up:
            failed.append(
                SkippedSubject(
                    name=subject.name,
                    label=subject.label,
                    reason=FAILED_AT_START,
                    detail="the backend it talks to did not start",
                )
            )
        elif isinstance(subject, Client) or subject.name in started:
            kept.append((subject, cells))
    if not any(isinstance(subject, Server | Client) for subject, _ in kept):
        first = failed[0].detail if failed else "nothing to measure"
        raise BenchError(f"no subject could run: {first}")
    return kept, failed
