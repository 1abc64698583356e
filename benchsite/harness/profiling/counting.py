"""The counting phase: instructions per request under Valgrind's callgrind, after the timed rounds.

Each server subject starts once more under `valgrind --tool=callgrind --instr-atstart=no
--trace-children=yes`, is verified like any start, warmed up, then counted over fixed batches of
requests of a cell's own load command: before a batch every callgrind process of the server's tree
is zeroed and switched on from outside (callgrind's monitor commands `zero`, `instrumentation on`, sent
by `vgdb`), after it switched off and dumped (`instrumentation off`, `dump`); the batch's instructions
are the sum of the dumps' `totals:` lines. Nothing is timed meanwhile, and a subject that cannot be
counted keeps its timed results, with the reason.
"""

from __future__ import annotations

import re
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from benchsite.errors import BenchError
from benchsite.harness.processes.processes import RunningServer
from benchsite.harness.processes.signals import checkpoint
from benchsite.harness.session.budget import FEWEST_BATCHES, CountPace, fitted_counting, fitted_said, pace
from benchsite.harness.session.context import RunContext
from benchsite.harness.session.load_argv import cell_argv
from benchsite.harness.session.start import StartHow, hash_seeded, start_one
from benchsite.model.counting import CountedBatch, Counting, CountPlan, InstructionCount
from benchsite.model.recipe import Server
from benchsite.model.run import ServerStart
from benchsite.tools import external_load
from benchsite.tools.base import ExternalCell

START_SLOWDOWN = 10  # a server under callgrind starts this many times slower, at the most
CONTROL_TIMEOUT_S = 60.0
# A server idle in a system call (as between batches) answers vgdb only when vgdb interrupts it, which it does
# after this long (vgdb's default, and callgrind_control's, is 100 ms: four waits a batch took 0.84 s, two 0.2 s).
INTERRUPT_AFTER_MS = 10
_TOTALS = re.compile(r"^totals:\s*(\d+)", re.MULTILINE)


def valgrind_version(program: str = "valgrind") -> str | None:
    """`valgrind --version` ("valgrind-3.19.0"), or None where valgrind is not installed."""
    try:
        done = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def wrapper(dumps: Path) -> tuple[str, ...]:
    """The command that runs a server under callgrind, counting nothing until told, its dumps and its
    control pipes in `dumps` (the server's own TMPDIR is elsewhere, so the pipes get an explicit prefix)."""
    return (
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        "--trace-children=yes",
        f"--vgdb-prefix={_prefix(dumps)}",
        f"--callgrind-out-file={dumps}/callgrind.%p.out",
    )


def _prefix(dumps: Path) -> str:
    return str(dumps / "vgdb")


def count_instructions(context: RunContext, starts: tuple[ServerStart, ...] | None = None) -> Counting | None:
    """Every server subject's count in the profile's counting cells (None: the profile counts nothing), in
    the counting plan's starts, each with the hash seed of the run's start of that number (cycling; none where
    the run started its servers once); the temporary folders the counted servers ran in are added to
    `context.counted_in` (the run stores none of them)."""
    counting, hosts = context.profile.counting, context.hosts
    if counting is None:
        return None
    version = valgrind_version()
    if not hosts.one_machine:
        return Counting(counter="valgrind callgrind", skipped="counted only when the servers run here", counts=())
    if version is None:
        return Counting(
            counter="valgrind callgrind",
            skipped="valgrind is not installed: apt-get install valgrind (conf/apt-packages.txt lists it)",
            counts=(),
        )
    seeds = [starts[number % len(starts)].hash_seed if starts else None for number in range(counting.starts)]
    counter = _Counter(context, counting)
    pairs = [
        (subject, cell)
        for subject, cells in context.plan
        if isinstance(subject, Server)
        for cell in map(external_load, cells)
        if cell is not None and cell.name in counting.cells
    ]
    counts = []
    for done, (subject, cell) in enumerate(pairs):
        plan = counter.fitted([s.name for s, _ in pairs[done:]])
        if plan is None:
            missing = InstructionCount(subject=subject.name, cell=cell.name, argv=(), batches=(), error=counter.said)
            counts.append(missing)
            continue
        context.reporter.status(f"counting instructions: {subject.label}, {cell.label}")
        counts.append(counter.count(subject, cell, seeds[: plan.starts], plan))
        found = counts[-1]
        said = f"{found.per_request:,.0f} instructions/request" if found.per_request else found.error
        context.reporter.step(f"{subject.label} {cell.label} under callgrind: {said}")
    return Counting(counter=f"{version} callgrind", skipped=None, counts=tuple(counts))


def counted_cell(cell: ExternalCell, counting: CountPlan) -> ExternalCell:
    """The cell whose load command a count runs: the cell itself, at the plan's concurrency where it sets one."""
    if counting.concurrency is None:
        return cell
    if "concurrency" not in type(cell).model_fields:
        raise BenchError(f"cell {cell.name} has no concurrency to count at (counting.concurrency is for ab cells)")
    return cell.model_copy(update={"concurrency": counting.concurrency})


@dataclass
class _Counter:
    """What every count of a run shares: the run's context, the counting plan, and the pace counting went at so
    far on this machine; the temporary folders the counted servers run in are added to the context's
    `counted_in`."""

    context: RunContext
    counting: CountPlan
    seen: CountPace = field(default_factory=CountPace)
    said: str = ""  # the last word on fitting counting into the time budget
    last_cut: CountPlan | None = None  # the plan that word was about

    def fitted(self, servers: list[str]) -> CountPlan | None:
        """The plan for the next of `servers`, fitted with them all into what the time budget leaves (the whole
        plan where the run has no budget); where it must do less, said once."""
        deadline = self.context.deadline
        if deadline is None:
            return self.counting
        left = deadline.left_s()
        plan = fitted_counting(self.counting, servers, self.context.measured, seconds=left, seen=self.seen)
        if plan != self.counting:
            said = fitted_said(self.counting, plan, left)
            if not self.said or plan != self.last_cut:  # a new cut is said; the same again for the next server is not
                self.context.reporter.step(said)
            self.said, self.last_cut = said, plan
        return plan

    def count(self, subject: Server, cell: ExternalCell, seeds: list[int | None], plan: CountPlan) -> InstructionCount:
        """One subject's count in one cell, start by start (each with its hash seed); any failure becomes the
        count's error, never the run's."""
        argv: list[str] = []
        batches: list[CountedBatch] = []
        error = None
        try:
            for number, seed in enumerate(seeds, start=1):
                argv = self.start(subject, cell, seed, number=number, batches=batches, plan=plan)
        except BenchError as failed:
            error = str(failed)
        return InstructionCount(
            subject=subject.name, cell=cell.name, argv=tuple(argv), batches=tuple(batches), error=error
        )

    def start(
        self,
        subject: Server,
        cell: ExternalCell,
        seed: int | None,
        *,
        number: int,
        batches: list[CountedBatch],
        plan: CountPlan,
    ) -> list[str]:
        """One start of a server under callgrind: warmed up, then its batches counted into `batches` (fewer where
        the next would overrun the time budget); the load command of a batch. The server stops when the start is
        over, and the pace it went at is kept."""
        context, counting = self.context, plan
        began = time.monotonic()
        settings, host = context.settings, context.hosts.server
        with ExitStack() as stack:
            workroot = stack.enter_context(host.workroot())
            context.counted_in.append(workroot)
            dumps = workroot / "callgrind"
            dumps.mkdir()
            port = host.free_port()
            values = {
                **host.values(context.recipe),
                "port": str(port),
                "port2": str(host.free_port()),
                "workdir": str(workroot / subject.name),
            }
            slow = settings.model_copy(update={"start_timeout_s": settings.start_timeout_s * START_SLOWDOWN})
            log_name = f"{subject.name}-callgrind" + (f"-start{number}" if number > 1 else "")
            wrap = (*hash_seeded(seed), *wrapper(dumps))
            how = StartHow(wrap=wrap, log_name=log_name, settings=slow, stack=stack)
            server = start_one(context, subject, values, how).server
            counted = counted_cell(cell, counting)
            argv = cell_argv(
                server, subject, counted, requests=counting.requests, settings=settings, address=host.address
            )
            serving_s, requests = 0.0, 0
            if counting.warmup_requests:
                warmup = cell_argv(
                    server, subject, counted, requests=counting.warmup_requests, settings=settings, address=host.address
                )
                serving_s, requests = _load(context, server, warmup), counting.warmup_requests
            for made in range(counting.batches):
                checkpoint()
                if made >= FEWEST_BATCHES and not self._fits(batches[-1].wall_s):
                    context.reporter.step(
                        f"{subject.label}: {made} batches of {counting.batches}: the time budget ends"
                    )
                    break
                batches.append(_batch(context, server, argv, dumps=dumps, requests=counting.requests))
                serving_s, requests = serving_s + batches[-1].wall_s, requests + counting.requests
        timed = pace(context.measured.get((subject.name, cell.name), ()))
        self.seen.saw(timed, requests, serving_s, time.monotonic() - began - serving_s)
        return argv

    def _fits(self, seconds: float) -> bool:
        deadline = self.context.deadline
        return deadline is None or seconds <= deadline.left_s()


def _load(context: RunContext, server: RunningServer, argv: list[str]) -> float:
    """One load run against the server under callgrind; its wall time. A failure is a BenchError."""
    settings = context.settings
    run = context.hosts.load.run_tool(argv, settings.load_cpu, settings.cell_timeout_s)
    code = server.exit_code()
    if code is not None:
        raise BenchError(f"the server exited with code {code} under valgrind: {server.telling()}")
    if run.exit_code != 0 or run.timed_out:
        last = (run.stderr.strip().splitlines() or ["no message"])[-1]
        raise BenchError(f"{argv[0]} failed against the server under valgrind (exit {run.exit_code}): {last}")
    return run.wall_s


def _batch(context: RunContext, server: RunningServer, argv: list[str], *, dumps: Path, requests: int) -> CountedBatch:
    """One counted batch: every callgrind process of the server's tree zeroed and switched on, the load,
    then switched off and dumped; the instructions are the sum of the new dumps."""
    pids = _callgrind_pids(server.pid)
    before = {pid: _dumps_of(dumps, pid) for pid in pids}
    for pid in pids:
        _monitor(dumps, pid, "zero", "instrumentation on")
    wall_s = _load(context, server, argv)
    for pid in pids:
        _monitor(dumps, pid, "instrumentation off", "dump")
    instructions = sum(_totals(_new_dump(dumps, pid, before[pid])) for pid in pids)
    return CountedBatch(requests=requests, instructions=instructions, wall_s=round(max(wall_s, 1e-6), 6))


def _callgrind_pids(root: int) -> list[int]:
    """The server's process and its descendants (valgrind follows them all), oldest first."""
    try:
        process = psutil.Process(root)
        return [process.pid, *(child.pid for child in process.children(recursive=True))]
    except psutil.NoSuchProcess:
        raise BenchError("the server exited under valgrind before it was counted") from None


def _monitor(dumps: Path, pid: int, *commands: str) -> None:
    """Callgrind's monitor commands to one process, in order, in one `vgdb` call (silent where all went well)."""
    argv = ["vgdb", f"--vgdb-prefix={_prefix(dumps)}", f"--max-invoke-ms={INTERRUPT_AFTER_MS}", f"--pid={pid}"]
    for command in commands:
        argv += ["-c", command]
    asked = ", ".join(commands)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=CONTROL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BenchError(f"vgdb ({asked}) did not answer in {CONTROL_TIMEOUT_S:g} s") from None
    said = " ".join(done.stdout.split())  # vgdb's own "sending command ..." lines go to standard error
    if done.returncode != 0 or said:
        last = said or " ".join(done.stderr.split()[-30:])
        raise BenchError(f"vgdb ({asked}) failed for process {pid}: {last[:200] or 'no message'}")


def _dumps_of(dumps: Path, pid: int) -> set[Path]:
    """The numbered dumps one process has written (callgrind.PID.out.N)."""
    return set(dumps.glob(f"callgrind.{pid}.out.*"))


def _new_dump(dumps: Path, pid: int, before: set[Path]) -> Path:
    """The dump a process wrote for the last `-d` (a moment may pass before it is whole)."""
    deadline = time.monotonic() + CONTROL_TIMEOUT_S
    while True:
        new = sorted(_dumps_of(dumps, pid) - before)
        if new and _TOTALS.search(new[-1].read_text(errors="replace")):
            return new[-1]
        if time.monotonic() > deadline:
            raise BenchError(f"callgrind wrote no readable dump for process {pid} within {CONTROL_TIMEOUT_S:g} s")
        time.sleep(0.1)


def _totals(path: Path) -> int:
    found = _TOTALS.search(path.read_text(errors="replace"))
    if found is None:
        raise BenchError(f"the callgrind dump {path.name} has no totals line")
    return int(found.group(1))
