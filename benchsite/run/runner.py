"""Run a recipe: start every subject, verify it, warm up, measure each cell R times, stop.

The result is one new run directory under data/<recipe>/, or nothing at all.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from benchsite.errors import BenchError
from benchsite.model.portable import placeholders_of
from benchsite.model.published import Published
from benchsite.model.recipe import (
    AbLoad,
    AnyLoad,
    AnySubject,
    Backend,
    Ceiling,
    Client,
    ClientLoad,
    HttpSubject,
    Profile,
    Recipe,
    Server,
    Settings,
    WrkLoad,
)
from benchsite.model.run import (
    FORMAT_VERSION,
    RUN_FILE,
    AbCell,
    ClientCell,
    Environment,
    HostRecord,
    Origin,
    Repetition,
    Rounds,
    RunDocument,
    SkippedSubject,
    SubjectRun,
    Topology,
    Verification,
    Warmup,
    WrkCell,
)
from benchsite.results.claims import verdicts
from benchsite.results.store import make_files_portable, new_run_id, staged_run_directory, write_portable
from benchsite.run.byo import search_path
from benchsite.run.environment import utc_now
from benchsite.run.hosts import Placement, on_this_machine
from benchsite.run.leftovers import forget_owner, record_owner
from benchsite.run.loads import load_argv, tool_path
from benchsite.run.processes import HttpReply, wait_until_accepting, wait_until_ready
from benchsite.run.processes import Server as RunningServer
from benchsite.run.signals import checkpoint, signal_for_test, signals_as_interrupt, signals_held
from benchsite.tools import EXTERNAL_TOOLS, VERSION_FLAGS, parse_report

HttpServerSubject = Server | Ceiling | Backend  # the subjects the runner starts


class Reporter(Protocol):
    """Where the runner says what it is doing (a progress display, or nothing)."""

    def begin(self, total_steps: int) -> None: ...

    def status(self, message: str) -> None: ...

    def step(self, message: str) -> None: ...


class SilentReporter:
    """A reporter that shows nothing."""

    def begin(self, total_steps: int) -> None:
        pass

    def status(self, message: str) -> None:
        pass

    def step(self, message: str) -> None:
        pass


def effective_settings(settings: Settings, hosts: Placement | None = None) -> Settings:
    """Drop CPU pinning where it cannot be had: on one machine, fewer than two CPUs to pin to; across
    two hosts, a server CPU the server host lacks or a tool CPU the load host lacks."""
    if hosts is None or hosts.one_machine:
        cpus = set(os.sched_getaffinity(0) if hosts is None else hosts.server.cpus())
        wanted = {settings.server_cpu, settings.tool_cpu} - {None}
        pinnable = len(cpus) >= 2 and wanted <= cpus
    else:
        pinnable = (settings.server_cpu is None or settings.server_cpu in hosts.server.cpus()) and (
            settings.tool_cpu is None or settings.tool_cpu in hosts.load.cpus()
        )
    return settings if pinnable else settings.model_copy(update={"server_cpu": None, "tool_cpu": None})


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


def _verification(reply: HttpReply) -> Verification:
    return Verification(
        status=reply.status,
        headers=tuple(reply.headers),
        body=reply.body[:500].decode(errors="replace"),
        body_bytes=len(reply.body),
    )


def cell_argv(
    server: RunningServer,
    subject: HttpSubject,
    load: AbLoad | WrkLoad,
    requests: int,
    settings: Settings,
    address: str,
) -> list[str]:
    """The load tool's command for one cell, aimed at the server's address and port."""
    path = load.path or subject.path
    return load_argv(load, f"http://{address}:{server.port}{path}", requests, settings)


def _tool_failure(tool: str, exit_code: int, timed_out: bool, stderr: str, timeout_s: float) -> str:
    if timed_out:
        return f"{tool} did not finish within {timeout_s:g} s and was stopped"
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else "no message"
    return f"{tool} exited with code {exit_code}: {last}"


def measure(
    hosts: Placement,
    server: RunningServer,
    subject_name: str,
    load: AnyLoad,
    argv: list[str],
    settings: Settings,
    run_dir: Path,
    index: int,
    backends: dict[str, RunningServer] | None = None,
    run_started: float | None = None,
) -> Repetition:
    """One repetition: the server's CPU time around one bounded load run, output kept verbatim.

    The load comes from the cell's tool (ab, wrk), or from `argv` itself for a client under test.
    Beside it: when it started in the run, and the CPU time others took on the measured CPUs.
    """
    started_after_s = None if run_started is None else round(time.monotonic() - run_started, 3)
    raw_output = f"raw/{subject_name}/{load.name}/rep-{index}.txt"
    (run_dir / raw_output).parent.mkdir(parents=True, exist_ok=True)
    code = server.exit_code()
    if code is not None:
        (run_dir / raw_output).write_text("")
        return Repetition(
            index=index,
            argv=tuple(argv),
            exit_code=-1,
            timed_out=False,
            raw_output=raw_output,
            wall_s=0.0,
            tool_cpu_s=0.0,
            server_cpu_s=0.0,
            backend_cpu_s={},
            result=None,
            error=f"the server had exited with code {code} before this repetition",
            started_after_s=started_after_s,
            steal_s=None,
            other_busy_s=None,
        )
    backends = {name: process for name, process in (backends or {}).items() if process is not server}
    cpu_before = server.tree_cpu_s()
    backends_before = {name: process.tree_cpu_s() for name, process in backends.items()}
    machine_before = hosts.cpu_times(settings.server_cpu, settings.tool_cpu)
    run = hosts.load.run_tool(argv, settings.tool_cpu, settings.cell_timeout_s)
    machine = hosts.cpu_times(settings.server_cpu, settings.tool_cpu) - machine_before
    server_cpu_s = max(0.0, server.tree_cpu_s() - cpu_before)  # a child that exited takes its CPU time along
    backend_cpu_s = {
        name: round(max(0.0, process.tree_cpu_s() - backends_before[name]), 6) for name, process in backends.items()
    }
    (run_dir / raw_output).write_text(run.stdout)
    result, error = None, None
    if run.exit_code != 0 or run.timed_out:
        (run_dir / raw_output).with_suffix(".stderr.txt").write_text(run.stderr)
        error = _tool_failure(load.tool, run.exit_code, run.timed_out, run.stderr, settings.cell_timeout_s)
    else:
        try:
            result = parse_report(load.tool, run.stdout)
        except BenchError as parse_error:
            raise BenchError(
                f"{' '.join(argv)} printed output this harness cannot read ({parse_error}); "
                f"check that `{argv[0]}` is the real {load.tool}"
            ) from None
    return Repetition(
        index=index,
        argv=tuple(argv),
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        raw_output=raw_output,
        wall_s=round(run.wall_s, 6),
        tool_cpu_s=round(run.cpu_s, 6),
        server_cpu_s=round(server_cpu_s, 6),
        result=result,
        error=error,
        backend_cpu_s=backend_cpu_s,
        started_after_s=started_after_s,
        steal_s=round(max(0.0, machine.steal_s), 3),
        other_busy_s=round(max(0.0, machine.busy_s - server_cpu_s - run.cpu_s - sum(backend_cpu_s.values())), 3),
    )


@dataclass(frozen=True)
class Started:
    """A running subject, the reply that verified it, and whether it keeps HTTP/1.0 connections alive."""

    subject: HttpServerSubject
    server: RunningServer
    reply: HttpReply | None  # None: probed over TCP only (a backend that does not speak HTTP)
    keeps_http10_alive: bool | None
    values: dict[str, str]  # the placeholders its command was filled with (port, port2, workdir...)


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


def _start_subjects(
    hosts: Placement,
    recipe: Recipe,
    subjects: list[HttpServerSubject],
    settings: Settings,
    stack: ExitStack,
    run_dir: Path,
    reporter: Reporter,
) -> tuple[dict[str, Started], list[SkippedSubject], Path]:
    """Start, probe and verify each subject on the server host; one that fails costs only its own row
    (the others run). Also returns the folder the subjects work in there."""
    started: dict[str, Started] = {}
    failed: list[SkippedSubject] = []
    host = hosts.server
    workroot = stack.enter_context(host.workroot())
    if hosts.one_machine:
        record_owner(run_dir, workroot=workroot)
    ports: dict[str, str] = {}  # port_<subject>: later subjects' configs reach earlier ones (backends)
    base = host.values(recipe)
    for offset, subject in enumerate(subjects):
        port = settings.port + offset if settings.port else host.free_port()
        workdir = workroot / subject.name
        values = {**base, **ports, "port": str(port), "port2": str(host.free_port()), "workdir": str(workdir)}
        ports[f"port_{subject.name.replace('-', '_')}"] = str(port)
        reporter.status(f"starting {subject.label} on port {port}")
        try:
            started[subject.name] = _start_one(hosts, recipe, subject, values, settings, stack, run_dir)
        except BenchError as error:
            failed.append(
                SkippedSubject(name=subject.name, label=subject.label, reason=FAILED_AT_START, detail=str(error))
            )
            reporter.step(f"{subject.label}: did not start ({error})")
    return started, failed, workroot


FAILED_AT_START = "it did not start or did not answer correctly on this machine"


def _start_one(
    hosts: Placement,
    recipe: Recipe,
    subject: HttpServerSubject,
    values: dict[str, str],
    settings: Settings,
    stack: ExitStack,
    run_dir: Path,
) -> Started:
    """One subject started on the server host, probed and verified from the load host; stopped again
    at once if any of it fails."""
    host, load, address = hosts.server, hosts.load, hosts.server.address
    port = int(values["port"])
    prepared = host.prepare(recipe, subject, values)
    if subject.prepare:
        _write(run_dir / "logs" / f"{subject.name}-prepare.log", prepared)
    for target, text in host.render(recipe, subject, values).items():
        _write(run_dir / "configs" / subject.name / target, text)
    argv = subject.command(values)
    on_start = (lambda started: record_owner(run_dir, server=started)) if hosts.one_machine else None
    with ExitStack() as own:
        with signals_held():  # no interrupt between the spawn and the registration for clean-up
            server = own.enter_context(
                host.start(
                    subject.name,
                    argv,
                    port,
                    settings.server_cpu,
                    run_dir / "logs" / f"{subject.name}.log",
                    Path(values["recipe_dir"]),
                    on_start,
                    tmpdir=Path(values["workdir"]),
                )
            )
        if isinstance(subject, Backend) and subject.probe == "tcp":
            wait_until_accepting(server, lambda: load.accepts(address, port), settings.start_timeout_s)
            found = Started(subject, server, None, None, values)
        else:
            wait_until_ready(server, lambda: load.http_get(address, port, subject.path), settings.start_timeout_s)
            reply = load.http_get(address, port, subject.path)  # a fresh request, checked before any load
            verify_reply(subject, reply)
            found = Started(subject, server, reply, load.keeps_http10_alive(address, port, subject.path), values)
        with signals_held():
            stack.push(own.pop_all())  # from here the run's own clean-up stops it
    return found


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run_recipe(
    recipe: Recipe,
    profile_name: str,
    data_dir: Path,
    repo_dir: Path,
    reporter: Reporter | None = None,
    published: Published | None = None,
    hosts: Placement | None = None,
) -> Path:
    """Measure every subject and cell of a recipe; return the new run directory.

    With the original page's claims (`published`) and a profile that allows further rounds, the
    cells feeding inconclusive claims get further rounds until every claim is decided, the
    profile's max_rounds is reached, or its time budget would be overrun.
    """
    reporter = reporter or SilentReporter()
    hosts = hosts or on_this_machine(repo_dir)
    run_started = time.monotonic()
    profile = recipe.profile(profile_name)
    settings = effective_settings(recipe.settings, hosts)
    plan = recipe.plan(profile)
    tools = sorted({load.tool for _, loads in plan for load in loads} & set(EXTERNAL_TOOLS))
    for tool in tools:
        if hosts.load.which(tool_path(tool, settings)) is None:
            where = "this system" if hosts.load.ssh is None else f"the load host {hosts.load.ssh}"
            raise BenchError(
                f"no {tool_path(tool, settings)} on {where}: run `.venv/bin/invoke setup` (needs root) there "
                f"to install the load tools"
            )
    for subject, _ in plan:
        _check_port_used(recipe, subject)
    if not hosts.one_machine:
        check_placeable(recipe)
    run_id = new_run_id(profile.name)
    started_at = utc_now()
    tool_versions: dict[str, list[str]] = {tool: [tool_path(tool, settings), VERSION_FLAGS[tool]] for tool in tools}
    environment = hosts.server.environment(list(recipe.packages), tool_versions)
    topology = None if hosts.one_machine else _topology(hosts, recipe, tool_versions, environment)
    os.environ["PATH"] = search_path(repo_dir)  # programs built by `invoke byo` come first
    skipped, runnable = [], []
    for subject, loads in plan:
        missing = hosts.server.missing(recipe, subject)
        if missing:
            skipped.append(
                SkippedSubject(name=subject.name, label=subject.label, reason=subject.skip_reason, detail=missing)
            )
            reporter.step(f"{subject.label}: skipped ({missing})")
        else:
            runnable.append((subject, loads))
    origins = {subject.name: hosts.server.origins(recipe, subject) for subject, _ in runnable}
    reporter.begin(sum(len(loads) for _, loads in runnable) * profile.repetitions)
    with signals_as_interrupt(), staged_run_directory(data_dir / recipe.name, run_id) as run_dir:
        with ExitStack() as stack:
            stack.callback(trim_logs, run_dir / "logs")
            servers = [s for s, _ in runnable if not isinstance(s, Client)]
            started, failed, workroot = _start_subjects(hosts, recipe, servers, settings, stack, run_dir, reporter)
            runnable, failed = _without_failed(runnable, started, failed)
            skipped += failed
            warmups = _warm_up(hosts, runnable, started, profile, settings, reporter)
            session = Measuring(hosts, recipe, runnable, started, profile, settings, run_dir, reporter, run_started)
            for index in range(1, profile.repetitions + 1):
                session.round(index, runnable)

            def document(rounds: Rounds | None) -> RunDocument:
                return RunDocument(
                    format_version=FORMAT_VERSION,
                    recipe=recipe.name,
                    title=recipe.title,
                    run_id=run_id,
                    profile=profile,
                    started_at=started_at,
                    finished_at=utc_now(),
                    settings=settings,
                    environment=environment,
                    warmups=tuple(warmups),
                    subjects=tuple(
                        _subject_run(subject, started, loads, profile, session.measured, origins[subject.name])
                        for subject, loads in runnable
                    ),
                    skipped=tuple(skipped),
                    rounds=rounds,
                    topology=topology,
                )

            rounds = session.further_rounds(published, lambda: document(None))
        placeholders = placeholders_of(hosts.load.values(recipe), None) | placeholders_of(
            hosts.server.values(recipe), workroot
        )
        make_files_portable(run_dir, placeholders)
        write_portable(run_dir / RUN_FILE, document(rounds).to_json(), placeholders)
        forget_owner(run_dir)
    signal_for_test("run-kept")
    return data_dir / recipe.name / run_id


def _check_port_used(recipe: Recipe, subject: AnySubject) -> None:
    """A server whose command never mentions {port} (nor its templates $port) cannot be reached: refuse it now."""
    if isinstance(subject, Client) or any("{port}" in token for token in subject.argv):
        return
    for template in subject.templates:
        try:
            text = (recipe.directory / template.source).read_text(errors="replace")
        except OSError:
            continue  # rendering it reports that
        if "$port" in text or "${port}" in text:
            return
    raise BenchError(
        f"{recipe.recipe_path}: the command of {subject.name!r} never uses {{port}} (and no template "
        "of it uses $port), so the harness could not reach it: pass {port} to the server"
    )


def check_placeable(recipe: Recipe) -> None:
    """Whether the recipe can run with its roles on two hosts: no clients under test, and every server
    listening on {host} (the address given for the server host)."""
    for subject in recipe.subjects:
        _check_placeable(recipe, subject)


def _check_placeable(recipe: Recipe, subject: AnySubject) -> None:
    if isinstance(subject, Client):
        raise BenchError(
            f"{recipe.name} measures clients on the machine of their backend: run it without --hosts "
            "(two-host runs take recipes whose subjects are servers)"
        )
    if isinstance(subject, Backend) or any("{host}" in token for token in subject.argv):
        return
    for template in subject.templates:
        text = (recipe.directory / template.source).read_text(errors="replace")
        if "$host" in text or "${host}" in text:
            return
    raise BenchError(
        f"{recipe.recipe_path}: the command of {subject.name!r} never uses {{host}} (nor a template of it "
        "$host), so on another host it would not listen where the load tool aims: pass {host} to the server"
    )


def _topology(
    hosts: Placement, recipe: Recipe, tool_versions: dict[str, list[str]], server_environment: Environment
) -> Topology:
    """Where the roles run, with the load host's own environment (the run's is the server host's)."""
    return Topology(
        server=HostRecord(
            role="server", ssh=hosts.server.ssh, address=hosts.server.address, environment=server_environment
        ),
        load=HostRecord(
            role="load",
            ssh=hosts.load.ssh,
            address=hosts.load.address,
            environment=hosts.load.environment(list(recipe.packages), tool_versions),
        ),
    )


def _without_failed(
    plan: Plan, started: dict[str, Started], failed: list[SkippedSubject]
) -> tuple[Plan, list[SkippedSubject]]:
    """The plan without the subjects that did not start (clients too, where no backend started);
    a run in which no measured subject started is an error naming the first failure."""
    failed = list(failed)
    backend_up = any(isinstance(s.subject, Backend) for s in started.values())
    kept: Plan = []
    for subject, loads in plan:
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
            kept.append((subject, loads))
    if not any(isinstance(subject, Server | Client) for subject, _ in kept):
        first = failed[0].detail if failed else "nothing to measure"
        raise BenchError(f"no subject could run: {first}")
    return kept, failed


Plan = list[tuple[AnySubject, list[AnyLoad]]]


def _warm_up(
    hosts: Placement,
    plan: Plan,
    started: dict[str, Started],
    profile: Profile,
    settings: Settings,
    reporter: Reporter,
) -> list[Warmup]:
    """One discarded run of each warm-up cell (default: every ab cell) per subject; argv and exit code kept."""
    records: list[Warmup] = []
    if profile.warmup_requests <= 0:
        return records
    for subject, loads in plan:
        if not isinstance(subject, Server | Ceiling):  # a client under test warms up inside its own run
            continue
        server = started[subject.name].server
        for load in loads:
            if not isinstance(load, AbLoad) or (profile.warmup_cells and load.name not in profile.warmup_cells):
                continue
            reporter.status(f"warming up {subject.label}, {load.label}")
            argv = cell_argv(server, subject, load, profile.warmup_requests, settings, hosts.server.address)
            run = hosts.load.run_tool(argv, settings.tool_cpu, settings.cell_timeout_s)
            records.append(Warmup(subject=subject.name, cell=load.name, argv=tuple(argv), exit_code=run.exit_code))
    return records


def _backend(started: dict[str, Started]) -> Started:
    """The service that a recipe's clients talk to (its subject of kind backend; the schema ensures one)."""
    return next(s for s in started.values() if isinstance(s.subject, Backend))


def client_argv(recipe: Recipe, subject: Client, load: ClientLoad, backend: Started, profile: Profile) -> list[str]:
    """The command of a client under test for one cell: the backend's URL, request counts, its files."""
    port = backend.values["port2"] if load.scheme == "https" else backend.values["port"]
    values = {
        **backend.values,
        "url": f"{load.scheme}://{backend.values['host']}:{port}{load.path}",
        "requests": str(profile.requests_for(load)),
        "warmup": str(profile.warmup_requests),
        "server_workdir": backend.values["workdir"],
    }
    return subject.command(values)


def _repetition_argv(
    hosts: Placement,
    recipe: Recipe,
    subject: AnySubject,
    load: AnyLoad,
    started: dict[str, Started],
    profile: Profile,
    settings: Settings,
) -> tuple[RunningServer, list[str]]:
    """The process whose CPU a repetition measures, and the command that makes the load."""
    if isinstance(subject, Client) and isinstance(load, ClientLoad):
        backend = _backend(started)
        return backend.server, client_argv(recipe, subject, load, backend, profile)
    if isinstance(subject, Server | Ceiling) and isinstance(load, AbLoad | WrkLoad):
        server = started[subject.name].server
        return server, cell_argv(server, subject, load, profile.requests_for(load), settings, hosts.server.address)
    raise BenchError(f"{recipe.recipe_path}: {subject.name} cannot run cell {load.name} ({load.tool})")


@dataclass
class Measuring:
    """The measured rounds of one run: every cell `repetitions` times, then further rounds where needed."""

    hosts: Placement
    recipe: Recipe
    plan: Plan
    started: dict[str, Started]
    profile: Profile
    settings: Settings
    run_dir: Path
    reporter: Reporter
    run_started: float
    measured: dict[tuple[str, str], list[Repetition]] = field(default_factory=dict)
    rounds_made: int = 0
    further_repetitions: int = 0

    def round(self, index: int, plan: Plan) -> None:
        """One round of the plan's cells. By default cell by cell: the subjects of a cell back to back, so
        the figures a claim compares are measured seconds apart, their order turning round every other
        round (A B, then B A)."""
        backends = {name: s.server for name, s in self.started.items() if isinstance(s.subject, Backend)}
        subjects = [subject for subject, _ in plan]
        if index % 2 == 0:
            subjects.reverse()
        for subject, load in self._order(plan, subjects):
            checkpoint()  # an interrupt swallowed anywhere stops the run here
            server, argv = _repetition_argv(
                self.hosts, self.recipe, subject, load, self.started, self.profile, self.settings
            )
            rep = measure(
                self.hosts,
                server,
                subject.name,
                load,
                argv,
                self.settings,
                self.run_dir,
                index,
                backends,
                self.run_started,
            )
            self.measured.setdefault((subject.name, load.name), []).append(rep)
            outcome = f"{rep.result.requests_per_s:,.0f} req/s" if rep.result else f"FAILED: {rep.error}"
            self.reporter.step(f"{subject.label} {load.label} round {index}: {outcome}")
        self.rounds_made = index

    def _order(self, plan: Plan, subjects: list[AnySubject]) -> list[tuple[AnySubject, AnyLoad]]:
        """The (subject, cell) pairs of a round in the order the settings ask for."""
        if self.settings.interleave == "subject":
            return [(subject, load) for subject, loads in plan for load in loads]
        loads_of = {subject.name: loads for subject, loads in plan}
        every_load = dict.fromkeys(load for _, loads in plan for load in loads)
        return [(subject, load) for load in every_load for subject in subjects if load in loads_of[subject.name]]

    def further_rounds(self, published: Published | None, document: Callable[[], RunDocument]) -> Rounds:
        """Rounds of the cells whose claims are still inconclusive, while the profile's limits allow."""
        profile = self.profile
        while True:
            needed: set[tuple[str, str]] = set()
            if published is not None and profile.max_rounds:
                needed = {cell for verdict in verdicts(document(), published) for cell in verdict.needs}
            stopped = self._why_stop(needed, published)
            if stopped:
                return Rounds(
                    minimum=profile.repetitions,
                    maximum=profile.max_rounds,
                    time_budget_s=profile.time_budget_s,
                    made=self.rounds_made,
                    further_repetitions=self.further_repetitions,
                    stopped=stopped,
                    elapsed_s=round(time.monotonic() - self.run_started, 1),
                )
            plan = [
                (subject, [load for load in loads if (subject.name, load.name) in needed])
                for subject, loads in self.plan
            ]
            plan = [(subject, loads) for subject, loads in plan if loads]
            done = sum(len(reps) for reps in self.measured.values())
            self.reporter.begin(done + sum(len(loads) for _, loads in plan))
            self.round(self.rounds_made + 1, plan)
            self.further_repetitions += sum(len(loads) for _, loads in plan)

    def _why_stop(self, needed: set[tuple[str, str]], published: Published | None) -> str:
        """Why no further round is made now ("" where one is)."""
        profile = self.profile
        if not profile.max_rounds:
            return "this profile makes no further rounds"
        if published is None:
            return "no published claims to decide"
        if not needed:
            return "no claim left that further rounds could decide"
        if self.rounds_made >= profile.max_rounds:
            return f"max_rounds ({profile.max_rounds}) reached"
        elapsed = time.monotonic() - self.run_started
        if elapsed + self._round_estimate_s(needed) > profile.time_budget_s:
            return f"the time budget ({profile.time_budget_s:g} s) would be overrun by another round"
        return ""

    def _round_estimate_s(self, needed: set[tuple[str, str]]) -> float:
        """How long a round of these cells takes, from their repetitions so far (plus start-up per run)."""
        return sum(statistics.median([rep.wall_s for rep in self.measured[cell]]) + 0.2 for cell in needed)


def _cell_run(load: AnyLoad, profile: Profile, repetitions: list[Repetition]) -> AbCell | WrkCell | ClientCell:
    reps = tuple(repetitions)
    if isinstance(load, AbLoad):
        return AbCell(
            name=load.name,
            label=load.label,
            concurrency=load.concurrency,
            keepalive=load.keepalive,
            requests=profile.requests_for(load),
            repetitions=reps,
        )
    if isinstance(load, WrkLoad):
        return WrkCell(
            name=load.name, label=load.label, connections=load.connections, duration_s=load.duration_s, repetitions=reps
        )
    return ClientCell(name=load.name, label=load.label, requests=profile.requests_for(load), repetitions=reps)


def _subject_run(
    subject: AnySubject,
    started: dict[str, Started],
    loads: list[AnyLoad],
    profile: Profile,
    measured: dict[tuple[str, str], list[Repetition]],
    origins: tuple[Origin, ...],
) -> SubjectRun:
    cells = tuple(_cell_run(load, profile, measured[(subject.name, load.name)]) for load in loads)
    if isinstance(subject, Client):
        return SubjectRun(
            name=subject.name,
            label=subject.label,
            role=subject.role,
            argv=subject.argv,
            server_software=None,
            keeps_http10_alive=None,
            verification=None,
            cells=cells,
            origins=origins,
        )
    own = started[subject.name]
    reply = own.reply
    return SubjectRun(
        name=subject.name,
        label=subject.label,
        role=subject.role,
        argv=tuple(own.server.argv),
        server_software=reply.header("Server") if reply else None,
        keeps_http10_alive=own.keeps_http10_alive,
        verification=_verification(reply) if reply else None,
        cells=cells,
        origins=origins,
    )
