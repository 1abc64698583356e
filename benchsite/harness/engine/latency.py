"""The open-loop latency profile of a run (model/latency.py says what it is): after the timed rounds, while
the servers still run, each server is offered shares of its capacity by benchsite-paced, in rounds."""

from __future__ import annotations

import statistics
import time
from typing import Any, cast

from benchsite.harness.processes.signals import checkpoint
from benchsite.harness.session.budget import WINDOW_EXTRA_S, kept_for_counting_s
from benchsite.harness.session.context import Measured, Plan, RunContext
from benchsite.harness.session.load_argv import cell_argv
from benchsite.harness.session.repetition import measure
from benchsite.model.conf import Settings
from benchsite.model.latency import LatencyPlan, LatencyProfile, LoadRun, SubjectLatency
from benchsite.model.recipe import Ceiling, Server
from benchsite.tools.base import Repetition
from benchsite.tools.paced import PacedCell, PacedCellRun


def capacities(plan: LatencyPlan, runnable: Plan, measured: Measured) -> dict[str, float]:
    """Each server's median req/s over its counted repetitions of the capacity cell; where others' work
    disturbed every one, over those (a lower bound: the loads it sets are then fractions of at least that);
    absent where none worked."""
    found: dict[str, float] = {}
    for subject, _ in runnable:
        worked = [rep for rep in measured.get((subject.name, plan.capacity_cell), []) if rep.ok]
        counted = [rep for rep in worked if rep.counted] or worked
        rates = [rep.result.requests_per_s for rep in counted if rep.result is not None]
        if isinstance(subject, Server | Ceiling) and rates:
            found[subject.name] = statistics.median(rates)
    return found


def paced_cell(plan: LatencyPlan, fraction: float, capacity_rps: float) -> PacedCell:
    """The open-loop cell offering `fraction` of a capacity."""
    return PacedCell(
        name=plan.cell_name(fraction),
        label=f"{round(100 * fraction)} % of capacity",
        rate=round(fraction * capacity_rps, 3),
        seconds=plan.seconds,
        connections=plan.connections,
        keepalive=plan.keepalive,
    )


def witness_args(plan: LatencyPlan, settings: Settings) -> list[str]:
    """The tool's witness at the plan's rate, on the server's CPU (where the run pins one)."""
    if not plan.witness_rps:
        return []
    cpu = [] if settings.server_cpu is None else ["--witness-cpu", str(settings.server_cpu)]
    return ["--witness", f"{plan.witness_rps:g}", *cpu]


QUEUE_TAIL_US = 900_000  # a p99 near a second where the listen queue turned attempts away is TCP's retry


def measure_latency(context: RunContext) -> LatencyProfile | None:
    """Every server at every offered load, once a round; None where the profile asks for no latency profile."""
    plan = context.profile.latency
    if plan is None:
        return None
    runnable, started, settings = context.plan, context.started, context.settings
    capacity = capacities(plan, runnable, context.measured)
    subjects = [
        subject
        for subject, _ in runnable
        if isinstance(subject, Server | Ceiling) and subject.name in capacity and subject.name in started
    ]
    skipped = {
        subject.name: f"no counted repetition in {plan.capacity_cell} to take its capacity from"
        for subject, _ in runnable
        if isinstance(subject, Server | Ceiling) and subject.name not in capacity
    }
    reps: dict[tuple[str, float], list[Repetition[Any]]] = {}
    context.reporter.begin(len(subjects) * len(plan.fractions) * plan.rounds)
    took: list[float] = []  # each load's wall time
    for index in range(1, plan.rounds + 1):
        order = subjects if index % 2 else list(reversed(subjects))
        for fraction in plan.fractions:
            cut = _cut_short(context, len(subjects), took)
            if cut:
                done = sum(len(made) for made in reps.values())
                context.reporter.step(f"latency: {done} of {len(subjects) * len(plan.fractions) * plan.rounds} {cut}")
                return _profile(plan, {s.name: capacity[s.name] for s in subjects}, reps, skipped=skipped, cut=cut)
            for subject in order:
                checkpoint()
                began = time.monotonic()
                server = started[subject.name].server
                cell = paced_cell(plan, fraction, capacity[subject.name])
                argv = cell_argv(server, subject, cell, requests=0, settings=settings, address=context.address)
                argv += witness_args(plan, settings)
                rep = measure(context, server, cell, argv, subject=subject.name, index=index)
                reps.setdefault((subject.name, fraction), []).append(rep)
                took.append(time.monotonic() - began)
                said = rep.result.latency_at_us(99.0) if rep.result is not None else None
                outcome = f"p99 {said / 1000:.2f} ms" if said is not None else f"FAILED: {rep.error}"
                turned = rep.result.listen_overflows if rep.result is not None else None
                if said is not None and said >= QUEUE_TAIL_US and turned:  # the listen queue's second, not the server's
                    outcome += f" (the listen queue turned {turned:,} attempts away: each is sent again a second later)"
                context.reporter.step(
                    f"{subject.label} open loop at {cell.label} ({cell.rate:,.0f} req/s) round {index}: {outcome}"
                )
    return _profile(plan, {s.name: capacity[s.name] for s in subjects}, reps, skipped=skipped, cut="")


def _profile(
    plan: LatencyPlan,
    capacity: dict[str, float],
    reps: dict[tuple[str, float], list[Repetition[Any]]],
    *,
    skipped: dict[str, str],
    cut: str,
) -> LatencyProfile:
    """The profile of the loads made: each server (of `capacity`, in its order) at every offered load it was given
    (the same for every server: loads stop at a share's boundary); a server given none is skipped, `cut` saying
    why."""
    measured = [name for name in capacity if any((name, fraction) in reps for fraction in plan.fractions)]
    return LatencyProfile(
        plan=plan,
        subjects=tuple(_subject_latency(plan, name, capacity[name], reps) for name in measured),
        skipped={**skipped, **{name: f"latency {cut}" for name in capacity if name not in measured}},
    )


def _cut_short(context: RunContext, servers: int, took: list[float]) -> str:
    """Why the latency loads stop before the next offered share ("" where it fits): every server at it, each load
    as long as the longest made (before any, as planned), would leave counting less than its smallest plan."""
    deadline, plan = context.deadline, context.profile.latency
    if deadline is None or plan is None:
        return ""
    share_s = servers * max([plan.seconds + WINDOW_EXTRA_S, *took])
    left = deadline.left_s() - kept_for_counting_s(context.profile, context.servers(), context.measured)
    if share_s <= left:
        return ""
    return f"loads made: the next share ({share_s:.0f} s) does not fit the {max(left, 0):.0f} s the time budget leaves"


def _subject_latency(
    plan: LatencyPlan, subject: str, capacity_rps: float, reps: dict[tuple[str, float], list[Repetition[Any]]]
) -> SubjectLatency:
    loads = []
    for fraction in (fraction for fraction in plan.fractions if (subject, fraction) in reps):
        cell_run = paced_cell(plan, fraction, capacity_rps).run_record(0, reps[(subject, fraction)])
        loads.append(LoadRun(fraction=fraction, cell=cast(PacedCellRun, cell_run)))
    return SubjectLatency(subject=subject, capacity_rps=round(capacity_rps, 3), loads=tuple(loads))
