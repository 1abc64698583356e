"""The stored records of a run: each subject's cell runs, where the roles ran, and the whole document."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from benchsite.harness.basics.environment import utc_now
from benchsite.harness.hosts.placement import Placement
from benchsite.harness.session.context import RunContext
from benchsite.harness.session.start import verification
from benchsite.model.conf import Profile, Settings
from benchsite.model.counting import Counting
from benchsite.model.interference import MachineCheck
from benchsite.model.latency import LatencyProfile
from benchsite.model.machine import Machine, MachineConf, fingerprint, machine_of
from benchsite.model.recipe import AnySubject, Client, Recipe
from benchsite.model.run import (
    FORMAT_VERSION,
    Environment,
    HostRecord,
    Origin,
    Rounds,
    RunDocument,
    ServerStart,
    SkippedSubject,
    SubjectRun,
    Topology,
    Warmup,
)
from benchsite.tools import AnyCell, AnyCellRun
from benchsite.tools.base import Repetition


def machine(environment: Environment, settings: Settings, named: MachineConf | None = None) -> Machine:
    """The machine a host's environment describes, named by its owner (`--machine`, conf/machine.toml) or
    by default."""
    found = fingerprint(
        cpu_model=environment.cpu_model,
        cpu_count=environment.cpu_count,
        memory_gib=environment.memory_total_gib,
        kernel=environment.kernel,
        virtualization=environment.virtualization,
        server_cpu=settings.server_cpu,
        load_cpu=settings.load_cpu,
    )
    return machine_of(found, named.name if named else None, named.description if named else "")


def topology(
    hosts: Placement,
    recipe: Recipe,
    tool_versions: dict[str, list[str]],
    server: Machine,
    server_environment: Environment,
    settings: Settings,
) -> Topology:
    """Where the roles run, by machine, with the load host's own environment (the run's is the server
    host's). How the hosts were reached (logins, addresses) is not stored."""
    load_environment = hosts.load.environment(list(recipe.packages), tool_versions)
    return Topology(
        server=HostRecord(role="server", machine=server, environment=server_environment),
        load=HostRecord(role="load", machine=machine(load_environment, settings), environment=load_environment),
    )


def subject_run(
    subject: AnySubject, cells: list[AnyCell], context: RunContext, origins: tuple[Origin, ...]
) -> SubjectRun:
    """One subject's record: its command, its verification and a cell run per cell."""
    measured, profile = context.measured, context.profile
    cell_runs = tuple(  # each cell's RUN is its tool's cell-run record, one of AnyCellRun
        cast(AnyCellRun, cell.run_record(profile.requests_for(cell), measured[(subject.name, cell.name)]))
        for cell in cells
    )
    if isinstance(subject, Client):
        return SubjectRun(
            name=subject.name,
            label=subject.label,
            role=subject.role,
            argv=subject.argv,
            server_software=None,
            keeps_http10_alive=None,
            verification=None,
            cells=cell_runs,
            origins=origins,
            idle_memory=None,
            idle_memory_output=None,
        )
    own = context.started[subject.name]
    reply = own.reply
    return SubjectRun(
        name=subject.name,
        label=subject.label,
        role=subject.role,
        argv=tuple(own.server.argv),
        server_software=reply.header("Server") if reply else None,
        keeps_http10_alive=own.keeps_http10_alive,
        verification=verification(reply) if reply else None,
        cells=cell_runs,
        origins=origins,
        idle_memory=own.idle_memory,
        idle_memory_output=own.idle_memory_output,
    )


@dataclass(frozen=True)
class RunHeader:
    """What a run's document says before any measurement: which run, where and with what."""

    recipe: Recipe
    run_id: str
    profile: Profile
    started_at: str
    settings: Settings
    environment: Environment
    machine: Machine
    topology: Topology | None
    machine_check: MachineCheck | None
    accepted_busy: bool
    starts: tuple[ServerStart, ...] | None = None  # several starts of the servers, each with its hash seed


def _begun(
    starts: tuple[ServerStart, ...] | None, measured: dict[tuple[str, str], list[Repetition[Any]]]
) -> tuple[ServerStart, ...] | None:
    """The starts whose rounds were made (a sequential run draws one per block up to its max_rounds)."""
    last = max((rep.index for reps in measured.values() for rep in reps), default=0)
    return None if starts is None else tuple(start for start in starts if start.first_round <= max(last, 1))


@dataclass
class RunParts:
    """What the phases of a run add to its document: where each subject's software came from, the subjects that
    did not run (and why), the warm-ups, how the rounds ended, the latency profile and the instruction counts."""

    origins: dict[str, tuple[Origin, ...]]
    skipped: list[SkippedSubject]
    warmups: list[Warmup] = field(default_factory=list)
    rounds: Rounds | None = None
    latency: LatencyProfile | None = None
    counting: Counting | None = None


def document(header: RunHeader, context: RunContext, parts: RunParts) -> RunDocument:
    """The whole run as run.json stores it, as it stands now."""
    return RunDocument(
        format_version=FORMAT_VERSION,
        recipe=header.recipe.name,
        title=header.recipe.title,
        run_id=header.run_id,
        profile=header.profile,
        started_at=header.started_at,
        finished_at=utc_now(),
        settings=header.settings,
        environment=header.environment,
        machine=header.machine,
        warmups=tuple(parts.warmups),
        subjects=tuple(
            subject_run(subject, cells, context, parts.origins[subject.name]) for subject, cells in context.plan
        ),
        skipped=tuple(parts.skipped),
        rounds=parts.rounds,
        topology=header.topology,
        counting=parts.counting,
        machine_check=header.machine_check,
        accepted_busy=header.accepted_busy,
        variants=header.recipe.variants,
        starts=_begun(header.starts, context.measured),
        latency=parts.latency,
    )
