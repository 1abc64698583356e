"""Measuring: warm-ups, then rounds of every (subject, cell), each repetition one bounded load run with
the CPU time it cost on each side and what else the machine did meanwhile; further rounds for the
cells of claims still undecided (a sequential run: of comparisons still undecided), within the profile's limits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsite.errors import BenchError
from benchsite.harness.engine.budget import BUDGET_HINT, RoundClock, after_rounds_s, budget_said
from benchsite.harness.engine.load_argv import cell_argv, repetition_argv
from benchsite.harness.engine.progress import Reporter
from benchsite.harness.engine.readings import kept_readings
from benchsite.harness.engine.start import Plan, Started
from benchsite.harness.hosts.placement import Placement
from benchsite.harness.processes.cputime import cpu_between, system_between
from benchsite.harness.processes.memory import SAMPLE_EVERY_S
from benchsite.harness.processes.processes import RunningServer
from benchsite.harness.processes.signals import checkpoint
from benchsite.model.conf import Profile, Settings
from benchsite.model.recipe import AnySubject, Backend, Ceiling, Recipe, Server
from benchsite.model.run import Rounds, RunDocument, Warmup
from benchsite.results.claims import Verdict
from benchsite.results.deciding import looked
from benchsite.results.intervals import half_width
from benchsite.results.published import Published
from benchsite.results.store import write_text
from benchsite.results.view import RunView
from benchsite.tools import AnyCell, AnyResult, parse_report
from benchsite.tools.base import BusyClock, ExternalCell, Repetition


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
    cell: AnyCell,
    argv: list[str],
    settings: Settings,
    run_dir: Path,
    index: int,
    backends: dict[str, RunningServer] | None = None,
    run_started: float | None = None,
) -> Repetition[Any]:
    """One repetition: the server's CPU time around one bounded load run, output kept verbatim.

    The load comes from the cell's tool (ab, wrk, h2load), or from `argv` itself for a client under test.
    Beside it: when it started in the run, and the CPU time others took on the measured CPUs.
    """
    started_after_s = None if run_started is None else round(time.monotonic() - run_started, 3)
    raw_output = f"raw/{subject_name}/{cell.name}/rep-{index}.txt"
    code = server.exit_code()
    if code is not None:
        write_text(run_dir / raw_output, "")
        return Repetition(
            index=index,
            argv=tuple(argv),
            exit_code=-1,
            timed_out=False,
            raw_output=raw_output,
            wall_s=0.0,
            load_cpu_s=0.0,
            server_cpu_s=0.0,
            server_cpu_clock="ticks",
            server_system_s=0.0,
            backend_cpu_s={},
            result=None,
            error=f"the server had exited with code {code} before this repetition",
            started_after_s=started_after_s,
            steal_s=None,
            other_busy_s=None,
            other_busy_clock=None,
            disturbed=False,
            server_memory=None,
            memory_output=None,
        )
    backends = {name: process for name, process in (backends or {}).items() if process is not server}
    cpu_before = server.tree_cpu()
    backends_before = {name: process.tree_cpu() for name, process in backends.items()}
    machine_before = hosts.cpu_times(settings.server_cpu, settings.load_cpu)
    every_s = SAMPLE_EVERY_S if cell.memory_read_during else None
    sampler = server.memory_sampler(settings.load_cpu, every_s) if cell.loads_a_server else None
    if sampler is not None:
        sampler.start()
    run = hosts.load.run_tool(argv, settings.load_cpu, settings.cell_timeout_s)
    server_memory = sampler.stop() if sampler is not None else None
    memory_output = kept_readings(sampler, server_memory, run_dir, raw_output)  # beside what it summarizes
    machine = hosts.cpu_times(settings.server_cpu, settings.load_cpu) - machine_before
    cpu_after = server.tree_cpu()
    server_cpu_s, clock = cpu_between(cpu_before, cpu_after)  # a child that exited takes its CPU along
    backend_cpu = {name: cpu_between(backends_before[name], process.tree_cpu()) for name, process in backends.items()}
    backend_cpu_s = {name: round(seconds, 9) for name, (seconds, _) in backend_cpu.items()}
    backend_clocks = [backend_clock for _, backend_clock in backend_cpu.values()]
    steal_s = round(max(0.0, machine.steal_s), 3)
    own_s = run.cpu_s + sum(backend_cpu_s.values()) + (sampler.cpu_s if sampler is not None else 0.0)
    other_busy_s = round(max(0.0, machine.busy_s - server_cpu_s - own_s), 6)
    exact = machine.clock == "cpuacct" and clock == "schedstat" and all(c == "schedstat" for c in backend_clocks)
    other_busy_clock: BusyClock = "cpuacct" if exact else "ticks"
    write_text(run_dir / raw_output, run.stdout)
    result: AnyResult | None = None
    error = None
    if run.exit_code != 0 or run.timed_out:
        write_text((run_dir / raw_output).with_suffix(".stderr.txt"), run.stderr)
        error = _tool_failure(cell.tool, run.exit_code, run.timed_out, run.stderr, settings.cell_timeout_s)
    else:
        try:
            result = parse_report(cell.tool, run.stdout)
        except BenchError as parse_error:
            raise BenchError(
                f"{' '.join(argv)} printed output this harness cannot read ({parse_error}); "
                f"check that `{argv[0]}` is the real {cell.tool}"
            ) from None
    return Repetition(
        index=index,
        argv=tuple(argv),
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        raw_output=raw_output,
        wall_s=round(run.wall_s, 6),
        load_cpu_s=round(run.cpu_s, 6),
        server_cpu_s=round(server_cpu_s, 9),
        server_cpu_clock=clock,
        server_system_s=round(system_between(cpu_before, cpu_after), 3),
        result=result,
        error=error,
        backend_cpu_s=backend_cpu_s,
        started_after_s=started_after_s,
        steal_s=steal_s,
        other_busy_s=other_busy_s,
        other_busy_clock=other_busy_clock,
        disturbed=settings.disturbed(other_busy_s + steal_s, run.wall_s, other_busy_clock),
        server_memory=server_memory,
        memory_output=memory_output,
    )


def warm_up(
    hosts: Placement,
    plan: Plan,
    started: dict[str, Started],
    profile: Profile,
    settings: Settings,
    reporter: Reporter,
) -> list[Warmup]:
    """One discarded run of each warm-up cell (default: every cell bounded by a request count) per subject;
    argv and exit code kept."""
    records: list[Warmup] = []
    if profile.warmup_requests <= 0:
        return records
    for subject, cells in plan:
        if not isinstance(subject, Server | Ceiling):  # a client under test warms up inside its own run
            continue
        server = started[subject.name].server
        for cell in cells:
            if not isinstance(cell, ExternalCell) or not cell.counted:
                continue
            if profile.warmup_cells and cell.name not in profile.warmup_cells:
                continue
            reporter.status(f"warming up {subject.label}, {cell.label}")
            address = hosts.server.address
            argv = cell_argv(server, subject, cell, profile.warmup_requests, settings, address, profile.seconds)
            run = hosts.load.run_tool(argv, settings.load_cpu, settings.cell_timeout_s)
            records.append(Warmup(subject=subject.name, cell=cell.name, argv=tuple(argv), exit_code=run.exit_code))
    return records


@dataclass
class Measuring:
    """The measured rounds of one run: every cell once a round for `rounds` rounds, then further ones where needed."""

    hosts: Placement
    recipe: Recipe
    plan: Plan
    started: dict[str, Started]
    profile: Profile
    settings: Settings
    run_dir: Path
    reporter: Reporter
    run_started: float
    measured: dict[tuple[str, str], list[Repetition[Any]]] = field(default_factory=dict)
    rounds_made: int = 0
    further_repetitions: int = 0
    counted: tuple[str, ...] = ()  # the servers measured after the timed rounds (latency, flames, counting)
    clock: RoundClock = field(default_factory=RoundClock)
    before_round: Callable[[int], None] | None = None  # what a round needs first (a new start of the servers)

    def round(self, index: int, plan: Plan) -> None:
        """One round of the plan's cells. By default cell by cell: the subjects of a cell back to back, so
        the figures a claim compares are measured seconds apart, their order turning round every other
        round (A B, then B A)."""
        began = time.monotonic()
        if self.before_round is not None:
            self.before_round(index)
        backends = {name: s.server for name, s in self.started.items() if isinstance(s.subject, Backend)}
        subjects = [subject for subject, _ in plan]
        if index % 2 == 0:
            subjects.reverse()
        for subject, cell in self._order(plan, subjects):
            checkpoint()  # an interrupt swallowed anywhere stops the run here
            server, argv = repetition_argv(
                self.hosts, self.recipe, subject, cell, self.started, self.profile, self.settings
            )
            rep = measure(
                self.hosts,
                server,
                subject.name,
                cell,
                argv,
                self.settings,
                self.run_dir,
                index,
                backends,
                self.run_started,
            )
            self.measured.setdefault((subject.name, cell.name), []).append(rep)
            outcome = f"{rep.result.requests_per_s:,.0f} req/s" if rep.result else f"FAILED: {rep.error}"
            if rep.disturbed:
                again = (
                    "measured again later"
                    if self.profile.max_rounds
                    else "not counted: this profile makes no further rounds"
                )
                outcome += f" (disturbed: others took {rep.interference_s:.2f} s of CPU; {again})"
            self.reporter.step(f"{subject.label} {cell.label} round {index}: {outcome}")
        self.rounds_made = index
        self.clock.took_s[index] = time.monotonic() - began

    def _order(self, plan: Plan, subjects: list[AnySubject]) -> list[tuple[AnySubject, AnyCell]]:
        """The (subject, cell) pairs of a round in the order the settings ask for."""
        if self.settings.interleave == "subject":
            return [(subject, cell) for subject, cells in plan for cell in cells]
        cells_of = {subject.name: cells for subject, cells in plan}
        every_cell = dict.fromkeys(cell for _, cells in plan for cell in cells)
        return [(subject, cell) for cell in every_cell for subject in subjects if cell in cells_of[subject.name]]

    def further_rounds(self, published: Published | None, document: Callable[[], RunDocument]) -> Rounds:
        """Rounds of the cells whose claims are still inconclusive, or wider than the profile's precision
        target (a sequential profile: of the copies' cells whose comparisons are undecided, looked at after every
        round), while the profile's limits allow."""
        profile = self.profile
        while True:
            view = RunView(document())
            if profile.sequential:  # the comparisons decide; claims are judged at the end, as they stand
                state = looked(view)
                self.reporter.step(f"after round {self.rounds_made}: {state.said()}")
                needed = state.to_measure  # a decided cell is done, disturbed or not: its interval counted that
                verdicts = []
            else:
                verdicts = published.verdicts(view) if published is not None else []
                needed = {cell for verdict in verdicts for cell in self._needs(verdict)} | self._disturbed_cells()
            needed = needed if profile.max_rounds else set()
            if self.rounds_made == profile.rounds and profile.max_rounds and profile.time_budget_s:
                every_cell = self.clock.estimate_s(self.measured, self.measured)
                elapsed = time.monotonic() - self.run_started
                self.reporter.step(budget_said(profile.time_budget_s, elapsed, self.after_rounds_s, every_cell))
            stopped = self._why_stop(needed, published)
            if stopped:
                if profile.sequential and published is not None:
                    verdicts = published.verdicts(view)
                return Rounds(
                    minimum=profile.rounds,
                    maximum=profile.max_rounds,
                    time_budget_s=profile.time_budget_s,
                    made=self.rounds_made,
                    further_repetitions=self.further_repetitions,
                    stopped=stopped,
                    elapsed_s=round(time.monotonic() - self.run_started, 1),
                    claims={verdict.claim.id: self._stood(verdict, stopped) for verdict in verdicts},
                )
            plan = [
                (subject, [cell for cell in cells if (subject.name, cell.name) in needed])
                for subject, cells in self.plan
            ]
            plan = [(subject, cells) for subject, cells in plan if cells]
            done = sum(len(reps) for reps in self.measured.values())
            self.reporter.begin(done + sum(len(cells) for _, cells in plan))
            self.round(self.rounds_made + 1, plan)
            self.further_repetitions += sum(len(cells) for _, cells in plan)

    def _disturbed_cells(self) -> set[tuple[str, str]]:
        """Every (subject, cell) of the cells with fewer undisturbed rounds than the profile's repetitions: a
        round in which others took the CPUs is measured again, every subject of its cell side by side."""
        rounds: dict[str, set[int]] = {}
        disturbed: dict[str, set[int]] = {}
        for (_, cell), reps in self.measured.items():
            rounds.setdefault(cell, set()).update(rep.index for rep in reps)
            disturbed.setdefault(cell, set()).update(rep.index for rep in reps if rep.disturbed)
        short = {cell for cell, made in rounds.items() if len(made - disturbed[cell]) < self.profile.rounds}
        return {key for key in self.measured if key[1] in short}

    def _needs(self, verdict: Verdict) -> tuple[tuple[str, str], ...]:
        """The cells further rounds should measure for a claim: an inconclusive one's, or those of an
        estimate wider than the precision target."""
        target = self.profile.target_half_width
        width = half_width(verdict.estimate) if verdict.estimate is not None else None
        if target and width is not None and width > target:
            return verdict.needs + verdict.rests_on
        return verdict.needs

    def _stood(self, verdict: Verdict, stopped: str) -> str:
        """Where a claim stood when the rounds stopped: its state, its interval's width, and why no more."""
        width = half_width(verdict.estimate) if verdict.estimate is not None else None
        said = verdict.state.value + ("" if width is None else f", ±{100 * width:.1f} %")
        target = self.profile.target_half_width
        if self._needs(verdict):
            return f"{said}: {stopped}"
        if target and width is not None:
            return f"{said}: within the target ±{100 * target:g} %"
        return said

    def _why_stop(self, needed: set[tuple[str, str]], published: Published | None) -> str:
        """Why no further round is made now ("" where one is)."""
        profile = self.profile
        if not profile.max_rounds:
            return "this profile makes no further rounds"
        if not needed and profile.sequential:
            return "every comparison decided"
        if not needed:
            target = f" or wider than ±{100 * profile.target_half_width:g} %" if profile.target_half_width else ""
            decided = f"no claim left undecided{target}" if published is not None else "no published claims to decide"
            return f"{decided} and no disturbed round to measure again"
        if self.rounds_made >= profile.max_rounds:
            return f"max_rounds ({profile.max_rounds}) reached"
        elapsed = time.monotonic() - self.run_started
        after = self.after_rounds_s
        if elapsed + self.clock.estimate_s(needed, self.measured) > profile.time_budget_s - after:
            kept = f", about {after:.0f} s of it for what follows the rounds" if after else ""
            return (
                f"the time budget ({profile.time_budget_s:g} s{kept}) would be overrun by another round ({BUDGET_HINT})"
            )
        return ""

    @property
    def after_rounds_s(self) -> float:
        """What follows the timed rounds will take (latency, flame graphs, counting), from the pace they saw."""
        return after_rounds_s(self.recipe, self.profile, self.counted, self.measured)
