"""The machine, software and settings of the run shown; each subject's software and banner; the harness's
own benchmark."""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes

from benchsite.errors import BenchError
from benchsite.model.conf import TICKS_FLOOR_S, Settings
from benchsite.model.overhead import OVERHEAD_DIR, OVERHEAD_FILE
from benchsite.model.portable import shown_command
from benchsite.model.run import Environment, Origin, RunDocument
from benchsite.model.upgrade import read_overhead
from benchsite.records import read_json
from benchsite.results.intervals import median_interval
from benchsite.results.metrics import RPS
from benchsite.results.overhead import harness_over_bare
from benchsite.sphinxext.base import BenchDirective, ReportingDirective
from benchsite.sphinxext.listings import note_listing
from benchsite.sphinxext.results import loads_run
from benchsite.sphinxext.tables import fmt_keepalive, table, with_interval


class BenchEnvironment(BenchDirective):
    """The machine, software and settings of the run."""

    def render(self) -> list[nodes.Node]:
        view = self.load_view()
        run = view.run
        env, settings, profile = run.environment, run.settings, run.profile
        rows: list[list[str]] = [
            ["Run", f"{run.run_id} ({profile.name} profile)"],
            ["Started / finished (UTC)", f"{run.started_at} / {run.finished_at}"],
            [
                "Load per cell",
                f"{loads_run(run)}, {profile.rounds} repetition{'s' * (profile.rounds != 1)}, "
                f"warm-up {profile.warmup_requests} requests",
            ],
            ["Rounds", _rounds(run)],
            ["Order within a round", _interleave(settings)],
            ["The machine before the run", run.machine_check.summary() if run.machine_check else "not checked"],
            ["Other work on the measured CPUs", _other_work(run)],
            ["Disturbed repetitions", f"{view.interference_said()}; {_disturbed_rule(run)}"],
            ["CPU pinning", _pinning(settings)],
            [
                "Load tool socket timeout / run time limit",
                f"{settings.socket_timeout_s} s / {settings.cell_timeout_s:g} s",
            ],
            ["Where the roles ran", where_roles_ran(run)],
            ["Machine", f"{run.machine.name} (id {run.machine.id}): {run.machine.description}"],
        ]
        machine = "" if run.topology is None else " (server host)"
        for key, (label, _) in Environment.LABELS.items():
            rows.append([label + machine, env.shown(key)])
        if run.topology is not None:
            load_env = run.topology.load.environment
            for key, (label, _) in Environment.LABELS.items():
                if key not in ("git_commit", "load_average_at_start"):
                    rows.append([label + " (load host)", load_env.shown(key)])
        for subject in run.subjects:
            rows.append([f"Server banner: {subject.label}", subject.server_software or "(none sent)"])
        return [table(("", "Value"), rows, classes=["bench-environment"])]


def where_roles_ran(run: RunDocument) -> str:
    """One machine, or which machine ran the servers and which the load tool (never how they were reached)."""
    if run.topology is None:
        return f"one machine ({run.machine.name}): servers on 127.0.0.1, the load tool beside them"
    server, load = run.topology.server.machine, run.topology.load.machine
    return (
        f"two hosts: servers on {server.name} (machine {server.id}), the load tool on {load.name} "
        f"(machine {load.id}), across the network between them"
    )


def _rounds(run: RunDocument) -> str:
    rounds = run.rounds
    if rounds is None:
        return f"{run.profile.rounds} of every cell (not recorded how the run stopped)"
    further = (
        f", then {rounds.further_repetitions} repetitions in further rounds of the cells of inconclusive claims "
        "or of disturbed rounds"
        if rounds.further_repetitions
        else ""
    )
    return (
        f"{rounds.made} in all: {rounds.minimum} of every cell{further}; stopped: {rounds.stopped} "
        f"(measuring took {rounds.elapsed_s:g} s)"
    )


def _interleave(settings: Settings) -> str:
    if settings.interleave == "cell":
        return "cell by cell: the subjects of a cell back to back, their order turning every other round"
    return "subject by subject: every cell of a subject back to back"


def _other_work(run: RunDocument) -> str:
    reps = [rep for s in run.subjects for c in s.cells for rep in c.repetitions if rep.steal_s is not None]
    if not reps:
        return "not recorded in this run"
    steal = max(rep.steal_s or 0.0 for rep in reps)
    other = sorted(rep.other_busy_s or 0.0 for rep in reps)
    return (
        f"CPU steal at most {steal:.2f} s in a repetition; busy time not spent by the run's own processes "
        f"(the harness itself, the kernel's network work, anything else): median {other[len(other) // 2]:.2f} s, "
        f"at most {other[-1]:.2f} s per repetition"
    )


def _disturbed_rule(run: RunDocument) -> str:
    settings = run.settings
    clocks = {rep.other_busy_clock for s in run.subjects for c in s.cells for rep in c.repetitions}
    floor = settings.disturbed_floor_s if clocks == {"cpuacct"} else max(settings.disturbed_floor_s, TICKS_FLOOR_S)
    counted = "counted in nanoseconds" if clocks == {"cpuacct"} else "in 10 ms clock ticks"
    return (
        f"a repetition is disturbed when others took more than {100 * settings.disturbed_share:g} % of its wall "
        f"time and {floor:g} s of CPU on the measured CPUs ({counted}); a run with more than "
        f"{100 * settings.busy_share:g} % of them disturbed was measured on a busy machine"
    )


def _pinning(settings: Settings) -> str:
    if settings.server_cpu is None:
        return "none (fewer than two CPUs available)"
    return f"servers on CPU {settings.server_cpu}, the load tool on CPU {settings.load_cpu}"


class BenchOverhead(ReportingDirective):
    """The harness's own benchmark: its req/s against bare ab of the same argv (latest record)."""

    def render(self) -> list[nodes.Node]:
        directory = Path(self.config.bench_data_dir) / OVERHEAD_DIR
        note_listing(self.env, directory, f"*/{OVERHEAD_FILE}")
        files = sorted(directory.glob(f"*/{OVERHEAD_FILE}"))
        if not files:
            raise BenchError(
                f"{directory}: no harness benchmark recorded: run `.venv/bin/invoke overhead` and commit it"
            )
        path = files[-1]
        self.env.note_dependency(str(path))
        record = read_overhead(read_json(path), path)
        fmt_rps = RPS.fmt
        harness, bare = median_interval(record.harness_rps), median_interval(record.bare_rps)
        per_round = harness_over_bare(record)
        difference = f"{record.difference_percent:+.1f}% (of the medians)"
        if per_round is not None and per_round.low is not None and per_round.high is not None:
            difference += (
                f"; round by round {100 * (per_round.value - 1):+.1f}% [{100 * (per_round.low - 1):+.1f}% "
                f"… {100 * (per_round.high - 1):+.1f}%] (95 % interval)"
            )
        rows = [
            ["Command", shown_command(record.ab_argv)],
            ["Rounds (each way, interleaved)", str(record.rounds)],
            ["Median req/s through the harness", with_interval(record.harness_rps_median, harness, fmt_rps)],
            ["Median req/s of bare ab (taskset, same CPU)", with_interval(record.bare_rps_median, bare, fmt_rps)],
            ["Difference", difference],
            ["Recorded", f"{record.started_at} ({path.parent.name})"],
        ]
        return [table(("Harness vs bare ab", ""), rows)]


def software(origins: tuple[Origin, ...], recorded: bool) -> nodes.Node | str:
    """Where a subject's modules and programs came from, one paragraph each: version, build, file, checksum."""
    if not origins:
        return "Python and its standard library (see the machine)" if recorded else "not recorded by this run"
    cell = nodes.container()
    for origin in origins:
        checksum = f" sha256 {origin.sha256[:12]}…" if origin.sha256 else ""
        paragraph = nodes.paragraph(text=f"{origin.provides}: {origin.version}")
        if origin.build:
            paragraph += nodes.Text("; ")
            paragraph += _with_links(origin.build)
        paragraph += nodes.Text(" ")
        paragraph += nodes.literal(text=origin.path)
        paragraph += nodes.Text(checksum)
        cell += paragraph
    return cell


def _with_links(text: str) -> list[nodes.Node]:
    """A stored description as a reader takes it in: addresses as short links, digests cut to 12 digits."""
    parts: list[nodes.Node] = []
    for index, piece in enumerate(re.split(r"(https://[^\s,;)]+)", text)):
        if index % 2:
            host = piece.split("/")[2]
            parts.append(nodes.reference(text=f"{host}/…", refuri=piece))
        else:
            parts.append(nodes.Text(re.sub(r"\b([0-9a-f]{12})[0-9a-f]{28,}\b", r"\1…", piece)))
    return parts


class BenchSubjects(BenchDirective):
    """One row per subject: its Server banner, whether it keeps HTTP/1.0 connections alive, or why it did not run.

    Keep-alive comes from the ab -k cells where the run has them, else from the start-up probe
    (two HTTP/1.0 keep-alive requests on one connection).
    """

    def render(self) -> list[nodes.Node]:
        view = self.load_view()
        run = view.run
        rows: list[list] = []
        recorded = any(subject.origins for subject in run.subjects)
        for subject in run.subjects:
            honoured = {
                c.tool: s.keepalive_honoured
                for c in subject.cells
                if c.keepalive
                for s in [view.summaries[(subject.name, c.name)]]
                if s.keepalive_honoured is not None
            }
            if honoured:
                keepalive = fmt_keepalive(all(honoured.values())) + f" ({', '.join(honoured)})"
            elif subject.keeps_http10_alive is not None:
                keepalive = fmt_keepalive(subject.keeps_http10_alive) + " (probe)"
            else:
                keepalive = "—"
            role = {"ceiling": " (load-tool ceiling)", "backend": " (backend)"}.get(subject.role, "")
            banner = "—" if subject.role == "client" else subject.server_software or "(none sent)"
            rows.append([subject.label + role, banner, keepalive, software(subject.origins, recorded), "ran"])
        for skipped in run.skipped:
            rows.append([skipped.label, "—", "—", "—", f"did not run: {skipped.reason} ({skipped.said})"])
        return [table(("Subject", "Server banner", "Keep-alive (measured by)", "Software", "Status"), rows)]
