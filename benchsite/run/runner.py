"""Run a recipe: start every subject, verify it, warm up, measure each cell R times, stop.

The result is one new run directory under data/<recipe>/, or nothing at all.
"""

from __future__ import annotations

import getpass
import grp
import os
import pwd
import shlex
import shutil
import statistics
import string
import subprocess
import sys
import sysconfig
import tempfile
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
    fill_all,
    fill_placeholders,
)
from benchsite.model.run import (
    FORMAT_VERSION,
    RUN_FILE,
    AbCell,
    ClientCell,
    Origin,
    Repetition,
    Rounds,
    RunDocument,
    SkippedSubject,
    SubjectRun,
    Verification,
    Warmup,
    WrkCell,
)
from benchsite.results.claims import verdicts
from benchsite.results.store import make_files_portable, new_run_id, staged_run_directory, write_portable
from benchsite.run.byo import search_path
from benchsite.run.environment import collect_environment, utc_now
from benchsite.run.leftovers import forget_owner, record_owner
from benchsite.run.loads import load_argv, tool_path
from benchsite.run.machine import cpu_times, measured_cpus
from benchsite.run.origins import subject_origins
from benchsite.run.processes import (
    LOOPBACK,
    HttpReply,
    ServerProcess,
    free_port,
    http_get,
    keeps_http10_alive,
    run_tool,
    running_server,
    wait_until_accepting,
    wait_until_ready,
)
from benchsite.run.signals import checkpoint, signal_for_test, signals_as_interrupt, signals_held
from benchsite.tools import EXTERNAL_TOOLS, VERSION_FLAGS, parse_report


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


def effective_settings(settings: Settings) -> Settings:
    """Drop CPU pinning where the machine has fewer than two CPUs to pin to."""
    cpus = os.sched_getaffinity(0)
    wanted = {settings.server_cpu, settings.tool_cpu} - {None}
    if len(cpus) < 2 or not wanted <= cpus:
        return settings.model_copy(update={"server_cpu": None, "tool_cpu": None})
    return settings


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
    server: ServerProcess, subject: HttpSubject, load: AbLoad | WrkLoad, requests: int, settings: Settings
) -> list[str]:
    path = load.path or subject.path
    return load_argv(load, f"http://{LOOPBACK}:{server.port}{path}", requests, settings)


def _tool_failure(tool: str, exit_code: int, timed_out: bool, stderr: str, timeout_s: float) -> str:
    if timed_out:
        return f"{tool} did not finish within {timeout_s:g} s and was stopped"
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else "no message"
    return f"{tool} exited with code {exit_code}: {last}"


def measure(
    server: ServerProcess,
    subject_name: str,
    load: AnyLoad,
    argv: list[str],
    settings: Settings,
    run_dir: Path,
    index: int,
    backends: dict[str, ServerProcess] | None = None,
    run_started: float | None = None,
) -> Repetition:
    """One repetition: the server's CPU time around one bounded load run, output kept verbatim.

    The load comes from the cell's tool (ab, wrk), or from `argv` itself for a client under test.
    Beside it: when it started in the run, and the CPU time others took on the measured CPUs.
    """
    started_after_s = None if run_started is None else round(time.monotonic() - run_started, 3)
    cpus = measured_cpus(settings.server_cpu, settings.tool_cpu)
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
    machine_before = cpu_times(cpus)
    run = run_tool(argv, cpu=settings.tool_cpu, timeout_s=settings.cell_timeout_s)
    machine = cpu_times(cpus) - machine_before
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

    subject: Server | Ceiling | Backend
    server: ServerProcess
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


def missing_requirement(recipe: Recipe, subject: AnySubject) -> str | None:
    """Why a subject cannot run here (a program or module it needs is absent), or None."""
    for program in subject.requires_programs:
        path = fill_placeholders(program, base_values(recipe), subject.name)
        if shutil.which(path) is None:
            return f"no {path} on this system"
    for module in subject.requires:
        result = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines()
            return f"import {module} failed: {lines[-1] if lines else f'exit code {result.returncode}'}"
    return None


def render_templates(subject: AnySubject, recipe: Recipe, values: dict[str, str], run_dir: Path) -> None:
    """Fill the subject's config templates ($name fields) into {workdir}; keep a copy in the run."""
    for template in subject.templates:
        source, target = template.source, template.target
        try:
            text = string.Template((recipe.directory / source).read_text()).substitute(values)
        except KeyError as error:
            known = ", ".join("$" + key for key in sorted(values))
            raise BenchError(
                f"{recipe.directory / source}: unknown field ${error.args[0]}: I know about {known}"
            ) from None
        except (OSError, UnicodeDecodeError) as error:
            raise BenchError(f"{recipe.directory / source}: cannot read the template ({error})") from None
        except ValueError as error:  # a lone $ or ${ without a name
            raise BenchError(f"{recipe.directory / source}: {error}: write $$ for a literal $") from None
        for directory in (Path(values["workdir"]), run_dir / "configs" / subject.name):
            (directory / target).parent.mkdir(parents=True, exist_ok=True)
            (directory / target).write_text(text)


def base_values(recipe: Recipe) -> dict[str, str]:
    """Placeholders every command and template may use."""
    user = "www-data" if os.geteuid() == 0 else getpass.getuser()  # who servers that drop privileges become
    return {
        "python": sys.executable,
        "bin": str(Path(sys.executable).parent),
        "host": LOOPBACK,
        "recipe_dir": str(recipe.directory.resolve()),
        "site_packages": sysconfig.get_paths()["purelib"],
        "user": user,
        "group": grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name,
    }


def run_prepare(subject: AnySubject, values: dict[str, str], cwd: Path, log_path: Path) -> None:
    """Run a subject's preparation command (it makes files in {workdir}); a failure stops the run."""
    if not subject.prepare:
        return
    argv = fill_all(subject.prepare, values, subject.name)
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        raise BenchError(
            f"preparing {subject.name!r} failed ({lines[-1] if lines else f'exit {result.returncode}'})"
            f": run it by hand to see why: cd {shlex.quote(str(cwd))} && {shlex.join(argv)}"
        )


def _start_subjects(
    recipe: Recipe,
    subjects: list[Server | Ceiling | Backend],
    settings: Settings,
    stack: ExitStack,
    run_dir: Path,
    reporter: Reporter,
) -> tuple[dict[str, Started], list[SkippedSubject]]:
    """Start, probe and verify each subject; one that fails costs only its own row (the others run)."""
    started: dict[str, Started] = {}
    failed: list[SkippedSubject] = []
    workroot = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="benchsite-")))
    workroot.chmod(0o755)  # servers that drop privileges (nginx workers) must read their files
    record_owner(run_dir, workroot=workroot)
    ports: dict[str, str] = {}  # port_<subject>: later subjects' configs reach earlier ones (backends)
    for offset, subject in enumerate(subjects):
        port = settings.port + offset if settings.port else free_port()
        workdir = workroot / subject.name
        workdir.mkdir()
        values = {**base_values(recipe), **ports, "port": str(port), "port2": str(free_port()), "workdir": str(workdir)}
        ports[f"port_{subject.name.replace('-', '_')}"] = str(port)
        reporter.status(f"starting {subject.label} on port {port}")
        try:
            started[subject.name] = _start_one(recipe, subject, values, settings, stack, run_dir)
        except BenchError as error:
            failed.append(
                SkippedSubject(name=subject.name, label=subject.label, reason=FAILED_AT_START, detail=str(error))
            )
            reporter.step(f"{subject.label}: did not start ({error})")
    return started, failed


FAILED_AT_START = "it did not start or did not answer correctly on this machine"


def _start_one(
    recipe: Recipe,
    subject: Server | Ceiling | Backend,
    values: dict[str, str],
    settings: Settings,
    stack: ExitStack,
    run_dir: Path,
) -> Started:
    """One subject started, probed and verified; stopped again at once if any of it fails."""
    port = int(values["port"])
    run_prepare(subject, values, recipe.directory, run_dir / "logs" / f"{subject.name}-prepare.log")
    render_templates(subject, recipe, values, run_dir)
    argv = subject.command(values)
    with ExitStack() as own:
        with signals_held():  # no interrupt between the spawn and the registration for clean-up
            server = own.enter_context(
                running_server(
                    subject.name,
                    argv,
                    port,
                    settings.server_cpu,
                    run_dir / "logs" / f"{subject.name}.log",
                    cwd=recipe.directory,
                    on_start=lambda started: record_owner(run_dir, server=started),
                )
            )
        if isinstance(subject, Backend) and subject.probe == "tcp":
            wait_until_accepting(server, settings.start_timeout_s)
            found = Started(subject, server, None, None, values)
        else:
            wait_until_ready(server, subject.path, settings.start_timeout_s)
            reply = http_get(port, subject.path)  # a fresh request, checked before any load
            verify_reply(subject, reply)
            found = Started(subject, server, reply, keeps_http10_alive(port, subject.path), values)
        with signals_held():
            stack.push(own.pop_all())  # from here the run's own clean-up stops it
    return found


def run_recipe(
    recipe: Recipe,
    profile_name: str,
    data_dir: Path,
    repo_dir: Path,
    reporter: Reporter | None = None,
    published: Published | None = None,
) -> Path:
    """Measure every subject and cell of a recipe; return the new run directory.

    With the original page's claims (`published`) and a profile that allows further rounds, the
    cells feeding inconclusive claims get further rounds until every claim is decided, the
    profile's max_rounds is reached, or its time budget would be overrun.
    """
    reporter = reporter or SilentReporter()
    run_started = time.monotonic()
    profile = recipe.profile(profile_name)
    settings = effective_settings(recipe.settings)
    plan = recipe.plan(profile)
    tools = sorted({load.tool for _, loads in plan for load in loads} & set(EXTERNAL_TOOLS))
    for tool in tools:
        if shutil.which(tool_path(tool, settings)) is None:
            raise BenchError(
                f"no {tool_path(tool, settings)} on this system: run `.venv/bin/invoke setup` (needs root) "
                f"to install the load tools"
            )
    for subject, _ in plan:
        _check_port_used(recipe, subject)
    run_id = new_run_id(profile.name)
    started_at = utc_now()
    environment = collect_environment(
        repo_dir, list(recipe.packages), {tool: [tool_path(tool, settings), VERSION_FLAGS[tool]] for tool in tools}
    )
    os.environ["PATH"] = search_path(repo_dir)  # programs built by `invoke byo` come first
    skipped, runnable = [], []
    for subject, loads in plan:
        missing = missing_requirement(recipe, subject)
        if missing:
            skipped.append(
                SkippedSubject(name=subject.name, label=subject.label, reason=subject.skip_reason, detail=missing)
            )
            reporter.step(f"{subject.label}: skipped ({missing})")
        else:
            runnable.append((subject, loads))
    origins = {subject.name: subject_origins(subject, base_values(recipe), repo_dir) for subject, _ in runnable}
    reporter.begin(sum(len(loads) for _, loads in runnable) * profile.repetitions)
    with signals_as_interrupt(), staged_run_directory(data_dir / recipe.name, run_id) as run_dir:
        with ExitStack() as stack:
            stack.callback(trim_logs, run_dir / "logs")
            servers = [s for s, _ in runnable if not isinstance(s, Client)]
            started, failed = _start_subjects(recipe, servers, settings, stack, run_dir, reporter)
            runnable, failed = _without_failed(runnable, started, failed)
            skipped += failed
            warmups = _warm_up(runnable, started, profile, settings, reporter)
            session = Measuring(recipe, runnable, started, profile, settings, run_dir, reporter, run_started)
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
                )

            rounds = session.further_rounds(published, lambda: document(None))
        workroot = Path(next(iter(started.values())).values["workdir"]).parent if started else None
        placeholders = placeholders_of(base_values(recipe), workroot)
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
            argv = cell_argv(server, subject, load, profile.warmup_requests, settings)
            run = run_tool(argv, cpu=settings.tool_cpu, timeout_s=settings.cell_timeout_s)
            records.append(Warmup(subject=subject.name, cell=load.name, argv=tuple(argv), exit_code=run.exit_code))
    return records


def _backend(started: dict[str, Started]) -> Started:
    """The service that a recipe's clients talk to (its subject of kind backend; the schema ensures one)."""
    return next(s for s in started.values() if isinstance(s.subject, Backend))


def client_argv(recipe: Recipe, subject: Client, load: ClientLoad, backend: Started, profile: Profile) -> list[str]:
    """The command of a client under test for one cell: the backend's URL, request counts, its files."""
    port = backend.values["port2"] if load.scheme == "https" else backend.values["port"]
    values = {
        **base_values(recipe),
        "url": f"{load.scheme}://{LOOPBACK}:{port}{load.path}",
        "requests": str(profile.requests_for(load)),
        "warmup": str(profile.warmup_requests),
        "server_workdir": backend.values["workdir"],
    }
    return subject.command(values)


def _repetition_argv(
    recipe: Recipe,
    subject: AnySubject,
    load: AnyLoad,
    started: dict[str, Started],
    profile: Profile,
    settings: Settings,
) -> tuple[ServerProcess, list[str]]:
    """The process whose CPU a repetition measures, and the command that makes the load."""
    if isinstance(subject, Client) and isinstance(load, ClientLoad):
        backend = _backend(started)
        return backend.server, client_argv(recipe, subject, load, backend, profile)
    if isinstance(subject, Server | Ceiling) and isinstance(load, AbLoad | WrkLoad):
        server = started[subject.name].server
        return server, cell_argv(server, subject, load, profile.requests_for(load), settings)
    raise BenchError(f"{recipe.recipe_path}: {subject.name} cannot run cell {load.name} ({load.tool})")


@dataclass
class Measuring:
    """The measured rounds of one run: every cell `repetitions` times, then further rounds where needed."""

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
            server, argv = _repetition_argv(self.recipe, subject, load, self.started, self.profile, self.settings)
            rep = measure(
                server, subject.name, load, argv, self.settings, self.run_dir, index, backends, self.run_started
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
