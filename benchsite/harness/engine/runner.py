"""Run a recipe: check, start every subject, verify it, warm up, measure each cell R times, stop.

The result is one new run directory under data/<recipe>/, or nothing at all. The steps live in
their own modules: `preflight` (refusals before anything starts), `start` (subjects up and
verified), `measure` (warm-ups, rounds and further rounds) and `record` (the stored document).
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.basics.environment import utc_now
from benchsite.harness.basics.progress import Reporter, SilentReporter
from benchsite.harness.builds.byo import search_path
from benchsite.harness.engine.latency import measure_latency
from benchsite.harness.engine.measure import Measuring, warm_up
from benchsite.harness.engine.preflight import check_placeable, check_port_used, check_tools, effective_settings
from benchsite.harness.engine.record import RunHeader, RunParts, document, machine, topology
from benchsite.harness.hosts.placement import Placement, on_this_machine
from benchsite.harness.interference.quiet import check_machine
from benchsite.harness.processes.signals import signal_for_test, signals_as_interrupt
from benchsite.harness.profiling.counting import count_instructions
from benchsite.harness.profiling.flames import record_flames
from benchsite.harness.session.budget import Deadline, ended_said, promise_said
from benchsite.harness.session.context import Plan, RunContext
from benchsite.harness.session.leftovers import forget_owner
from benchsite.harness.session.start import (
    restart_subjects,
    start_subjects,
    stop_side_by_side,
    trim_logs,
    without_failed,
)
from benchsite.model.conf import Profile
from benchsite.model.machine import MachineConf
from benchsite.model.portable import placeholders_of
from benchsite.model.recipe import Client, Recipe
from benchsite.model.run import RUN_FILE, Rounds, ServerStart, SkippedSubject
from benchsite.results.contribute import known_machine_names
from benchsite.results.published import Published
from benchsite.results.store import make_files_portable, new_run_id, staged_run_directory, write_portable


@dataclass(frozen=True)
class RunChoices:
    """What the user chose: wait for a busy machine to settle first (bounded by the settings), count the
    repetitions others disturbed as figures (--accept-busy), and a time budget instead of the profile's."""

    wait_for_quiet: bool = True
    accept_busy: bool = False
    budget_s: float = 0.0  # 0: the profile's

    def __post_init__(self) -> None:
        if self.budget_s and not MIN_BUDGET_S <= self.budget_s <= MAX_BUDGET_S:
            raise BenchError(
                f"--budget {self.budget_s:g}: give the run's time budget in seconds, from {MIN_BUDGET_S:g} to "
                f"{MAX_BUDGET_S:g} (a day)"
            )

    def profile(self, profile: Profile) -> Profile:
        """The profile with the budget chosen, if any (the run records the budget it had)."""
        return profile.model_copy(update={"time_budget_s": self.budget_s}) if self.budget_s else profile


MIN_BUDGET_S, MAX_BUDGET_S = 10.0, 86400.0


def run_recipe(
    recipe: Recipe,
    profile_name: str,
    data_dir: Path,
    repo_dir: Path,
    reporter: Reporter | None = None,
    published: Published | None = None,
    hosts: Placement | None = None,
    named: MachineConf | None = None,
    choices: RunChoices = RunChoices(),
) -> Path:
    """Measure every subject and cell of a recipe; return the new run directory.

    The run's phases, in order: the checks and its header, the subjects started, warmed up and measured in
    rounds (further ones for the original page's undecided claims, `published`, or a sequential profile's
    undecided comparisons, within the profile's limits), the latency profile, the flame graphs; once the servers
    are stopped, the instruction counts; then the run kept.
    """
    reporter = reporter or SilentReporter()
    hosts = hosts or on_this_machine(repo_dir)
    run_started = time.monotonic()
    profile = choices.profile(recipe.profile(profile_name))
    plan: Plan = list(recipe.plan(profile))
    header = _header(recipe, profile, hosts, plan=plan, data_dir=data_dir, named=named, choices=choices, say=reporter)
    os.environ["PATH"] = search_path(repo_dir)  # programs built by `invoke byo` come first
    skipped, runnable = _present(hosts, recipe, plan, reporter)
    _both_sides_run(recipe, skipped)
    parts = RunParts(
        origins={subject.name: hosts.server.origins(recipe, subject) for subject, _ in runnable}, skipped=skipped
    )
    deadline = Deadline(run_started, profile.time_budget_s) if profile.time_budget_s else None
    if deadline is not None:
        cells = len({cell.name for _, each in runnable for cell in each})
        reporter.step(promise_said(profile, len(runnable), cells, deadline))
    reporter.begin(sum(len(cells) for _, cells in runnable) * profile.rounds)
    with signals_as_interrupt(), staged_run_directory(data_dir / recipe.name, header.run_id) as run_dir:
        context = RunContext(
            hosts=hosts,
            recipe=recipe,
            profile=profile,
            settings=header.settings,
            run_dir=run_dir,
            reporter=reporter,
            run_started=run_started,
            plan=runnable,
            deadline=deadline,
        )
        with context.stack:
            context.stack.callback(trim_logs, run_dir / "logs")
            _start(context, parts, header.starts)
            parts.warmups = warm_up(context)
            parts.rounds = _rounds(context, header, parts, published)
            parts.latency = measure_latency(context)
            record_flames(context)
            record_flames(context, wallclock=True)
        parts.counting = count_instructions(context, header.starts)  # the timed servers are stopped
        _keep(context, header, parts)
    if deadline is not None:
        reporter.step(ended_said(deadline))
    signal_for_test("run-kept")
    return data_dir / recipe.name / header.run_id


def _header(
    recipe: Recipe,
    profile: Profile,
    hosts: Placement,
    *,
    plan: Plan,
    data_dir: Path,
    named: MachineConf | None,
    choices: RunChoices,
    say: Reporter,
) -> RunHeader:
    """The refusals before anything starts (tools, ports, placement), then what the run's document says first:
    which run, on which machine (the name data/ knows it by), how busy it was, the starts drawn."""
    settings = effective_settings(recipe.settings, hosts)
    tool_versions = check_tools(hosts, plan, settings, () if profile.latency is None else ("paced",))
    for subject, _ in plan:
        check_port_used(recipe, subject)
    if not hosts.one_machine:
        check_placeable(recipe)
    environment = hosts.server.environment(list(recipe.packages), tool_versions)
    server_machine = machine(environment, settings, named)
    known = known_machine_names(data_dir).get(server_machine.id)
    if known is not None and known != server_machine.name:  # one machine, one name: the one data/ knows
        say.step(f"this machine is {known!r} in {data_dir.name}/ (id {server_machine.id}): its runs keep that name")
        server_machine = server_machine.model_copy(update={"name": known})
    machine_check = check_machine(hosts, settings, choices.wait_for_quiet, say.step)
    say.step(f"{'quiet' if machine_check.quiet else 'BUSY'} machine: {machine_check.summary()}")
    return RunHeader(
        recipe=recipe,
        run_id=new_run_id(profile.name),
        profile=profile,
        started_at=utc_now(),
        settings=settings,
        environment=environment,
        machine=server_machine,
        topology=None
        if hosts.one_machine
        else topology(
            hosts,
            recipe,
            tool_versions=tool_versions,
            server=server_machine,
            server_environment=environment,
            settings=settings,
        ),
        machine_check=machine_check,
        accepted_busy=choices.accept_busy,
        starts=drawn_starts(profile),
    )


def _start(context: RunContext, parts: RunParts, starts: tuple[ServerStart, ...] | None) -> None:
    """The servers started (with the first start's hash seed), stopped when the context's stack closes; a subject
    that did not start leaves the plan for the skipped (an A/B side stops the run: nothing is kept)."""
    seeds = {start.first_round: start.hash_seed for start in starts or ()}
    servers = [s for s, _ in context.plan if not isinstance(s, Client)]
    failed = start_subjects(context, servers, seeds.get(1))
    context.stack.callback(stop_side_by_side, context.started)
    _both_sides_run(context.recipe, failed)  # before any round: the staged run goes with the error
    context.plan, failed = without_failed(context.plan, context.started, failed)
    parts.skipped += failed


def _rounds(context: RunContext, header: RunHeader, parts: RunParts, published: Published | None) -> Rounds:
    """The timed rounds, then the further ones; each new start of the servers (a profile of several starts) is
    started anew with its hash seed and warmed up before its first round."""
    profile = context.profile
    seeds = {start.first_round: start.hash_seed for start in header.starts or ()}
    session = Measuring(context)
    session.counted = tuple(s.name for s, _ in context.plan if not isinstance(s, Client))

    def begin_round(index: int) -> None:
        if index > 1 and index in seeds:  # a new start: the servers anew, with its hash seed
            restart_subjects(context, profile.start_of(index), seeds[index])
            warm_up(context)

    session.before_round = begin_round
    for index in range(1, profile.rounds + 1):
        session.round(index, context.plan)
    return session.further_rounds(published, lambda: document(header, context, parts))


def _keep(context: RunContext, header: RunHeader, parts: RunParts) -> None:
    """The run's files made portable (no path of this machine) and its document written; the run is no longer
    a leftover of this process."""
    hosts, recipe, run_dir = context.hosts, context.recipe, context.run_dir
    placeholders = placeholders_of(hosts.load.values(recipe), None) | placeholders_of(
        hosts.server.values(recipe), context.workroot
    )
    placeholders |= {str(folder): "{workroot}" for folder in context.counted_in}
    make_files_portable(run_dir, placeholders)
    write_portable(run_dir / RUN_FILE, document(header, context, parts).to_json(), placeholders)
    forget_owner(run_dir)


def drawn_starts(profile: Profile) -> tuple[ServerStart, ...] | None:
    """Where a profile starts the servers several times: each start's first round and a random hash seed."""
    if profile.starts == 1:
        return None
    draw = random.SystemRandom()
    return tuple(ServerStart(first_round=first, hash_seed=draw.randrange(2**32)) for first in profile.first_rounds())


def _present(hosts: Placement, recipe: Recipe, plan: Plan, reporter: Reporter) -> tuple[list[SkippedSubject], Plan]:
    """The subjects whose software is missing on the server host (with why), and the others."""
    skipped: list[SkippedSubject] = []
    runnable: Plan = []
    for subject, cells in plan:
        missing = hosts.server.missing(recipe, subject)
        if missing:
            skipped.append(
                SkippedSubject(name=subject.name, label=subject.label, reason=subject.skip_reason, detail=missing)
            )
            reporter.step(f"{subject.label}: skipped ({missing})")
        else:
            runnable.append((subject, cells))
    return skipped, runnable


def _both_sides_run(recipe: Recipe, not_running: list[SkippedSubject]) -> None:
    """An A/B run measures every copy of both sides or nothing: a side's copy that is missing its software or
    did not start stops the run at once, with that copy's own reason."""
    if recipe.variants is None or recipe.variants.sweep:
        return
    copies = {copy for variant in recipe.variants.variants for copy in variant.copies.values()}
    for each in not_running:
        if each.name in copies:
            raise BenchError(f"{each.label} cannot run: {each.said}; fix that side and run again (nothing was kept)")
