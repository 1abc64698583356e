"""One repetition: a bounded load run against a running server, the CPU time it cost on each side, what else
the machine did meanwhile and the server's memory, with the tool's output kept verbatim."""

from __future__ import annotations

from typing import Any

from benchsite.errors import BenchError
from benchsite.harness.basics.probes import port_answers
from benchsite.harness.processes.commands import ToolRun
from benchsite.harness.processes.cputime import cpu_between, system_between
from benchsite.harness.processes.memory import SAMPLE_EVERY_S
from benchsite.harness.processes.processes import RunningServer
from benchsite.harness.session.context import RunContext
from benchsite.harness.session.memory import kept_readings
from benchsite.results.store import write_text
from benchsite.tools import AnyResult, parse_report
from benchsite.tools.base import BusyClock, CellBase, Repetition


def _tool_failure(tool: str, run: ToolRun, timeout_s: float) -> str:
    """Why a load run gave no figure, in one line."""
    if run.timed_out:
        return f"{tool} did not finish within {timeout_s:g} s and was stopped"
    lines = [line.strip() for line in run.stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else "no message"
    return f"{tool} exited with code {run.exit_code}: {last}"


UNREADABLE = "printed output this harness cannot read"


def _why_gone(context: RunContext, server: RunningServer, code: int, *, when: str = "before") -> str:
    """Why a repetition has no figure: its server's process exited (`when`: before or during it), or daemonized
    (exited while what it left still holds its port: its CPU time is no longer counted)."""
    if port_answers(context.address, server.port):
        return (
            f"the server daemonized after it answered: its process exited (code {code}) while port {server.port} "
            "still answers: run it in the foreground (its no-daemon option); what it left running is stopped"
        )
    return f"the server had exited with code {code} {when} this repetition"


def _read(context: RunContext, subject: str, cell: CellBase, argv: list[str], output: str) -> AnyResult | str:
    """The tool's report, or why it cannot be read: a report the harness cannot read fails its repetition (its
    raw output kept), and the run stops only where the same subject's report in the same cell could not be read
    the time before either."""
    where = (subject, cell.name)
    try:
        result = parse_report(cell.TOOL.name, output)
    except BenchError as parse_error:
        error = f"{UNREADABLE} ({parse_error})"
        if where in context.unreadable:
            raise BenchError(
                f"{' '.join(argv)} {error}, twice in a row; check that `{argv[0]}` is the real {cell.TOOL.name}"
            ) from None
        context.unreadable.add(where)
        return error
    context.unreadable.discard(where)
    return result


def measure(
    context: RunContext, server: RunningServer, cell: CellBase, argv: list[str], *, subject: str, index: int
) -> Repetition[Any]:
    """One repetition of `subject` in `cell` (round `index`): the server's CPU time around one bounded load run,
    output kept verbatim.

    The load comes from the cell's tool (ab, wrk, h2load), or from `argv` itself for a client under test.
    Beside it: when it started in the run, and the CPU time others took on the measured CPUs (the backends'
    CPU time is their own).
    """
    hosts, settings, run_dir, subject_name = context.hosts, context.settings, context.run_dir, subject
    started_after_s = round(context.since_start_s(), 3)
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
            error=_why_gone(context, server, code),
            started_after_s=started_after_s,
            steal_s=None,
            other_busy_s=None,
            other_busy_clock=None,
            disturbed=False,
            server_memory=None,
            memory_output=None,
        )
    backends = {name: process for name, process in context.backends().items() if process is not server}
    cpu_before = server.tree_cpu()
    backends_before = {name: process.tree_cpu() for name, process in backends.items()}
    machine_before = hosts.cpu_times(settings.server_cpu, settings.load_cpu)
    every_s = SAMPLE_EVERY_S if cell.memory_read_during else None
    sampler = server.memory_sampler(settings.load_cpu, every_s) if cell.loads_a_server else None
    if sampler is not None:
        sampler.start()
    run = hosts.load.run_tool(argv, settings.load_cpu, settings.cell_timeout_s)
    cpu_after = server.tree_cpu()  # at once: the server's CPU over the tool's process, not over what follows
    backends_after = {name: process.tree_cpu() for name, process in backends.items()}
    machine = hosts.cpu_times(settings.server_cpu, settings.load_cpu) - machine_before
    server_memory = sampler.stop() if sampler is not None else None
    memory_output = kept_readings(sampler, server_memory, run_dir, raw_output)  # beside what it summarizes
    server_cpu_s, clock = cpu_between(cpu_before, cpu_after)  # a child that exited takes its CPU along
    backend_cpu = {name: cpu_between(backends_before[name], backends_after[name]) for name in backends}
    backend_cpu_s = {name: round(seconds, 9) for name, (seconds, _) in backend_cpu.items()}
    backend_clocks = [backend_clock for _, backend_clock in backend_cpu.values()]
    steal_s = round(max(0.0, machine.steal_s), 3)
    own_s = run.cpu_s + sum(backend_cpu_s.values()) + (sampler.cpu_s if sampler is not None else 0.0)
    other_busy_s = round(max(0.0, machine.busy_s - server_cpu_s - own_s), 6)
    exact = machine.clock == "cpuacct" and clock == "schedstat" and all(c == "schedstat" for c in backend_clocks)
    other_busy_clock: BusyClock = "cpuacct" if exact else "ticks"
    write_text(run_dir / raw_output, run.stdout)
    result: AnyResult | None = None
    error: str | None = None
    gone_code = server.exit_code()
    if run.exit_code != 0 or run.timed_out:
        write_text((run_dir / raw_output).with_suffix(".stderr.txt"), run.stderr)
        error = _tool_failure(cell.TOOL.name, run, settings.cell_timeout_s)
    elif gone_code is not None:  # its CPU time from then on is nobody's: the repetition has no figure
        error = _why_gone(context, server, gone_code, when="during")
    else:
        read = _read(context=context, subject=subject_name, cell=cell, argv=argv, output=run.stdout)
        result, error = (None, read) if isinstance(read, str) else (read, None)
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
