"""Flame graphs: where a Python server's time goes, sampled by py-spy from outside, by PID.

After the timed rounds, while the servers still run, each server under a load window of its own (its
cell's load command, repeated until the window ends): py-spy records it twice, once as an SVG flame
graph, once as collapsed stacks (`raw`) from which the page counts each function's share of samples.
Nothing is timed meanwhile. The files go to flame/ in the run; a server py-spy cannot sample (not
Python, or py-spy missing) gets a note there instead.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchsite.harness.processes.signals import checkpoint
from benchsite.harness.session.budget import flame_window_s, kept_for_counting_s
from benchsite.harness.session.context import RunContext
from benchsite.harness.session.load_argv import cell_argv
from benchsite.model.recipe import Server
from benchsite.results.flames import FLAME_DIR, SAMPLE_RATE, WALLCLOCK_DIR
from benchsite.results.store import write_text
from benchsite.tools import external_load

WINDOW_REQUESTS = 500  # one load run of a window; runs repeat until py-spy is done


def py_spy() -> str | None:
    """The py-spy of the project's environment (beside its Python), else one on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.is_file() else shutil.which("py-spy")


def record_flames(context: RunContext, wallclock: bool = False) -> None:
    """A flame graph and collapsed stacks per server and flame cell, where the conf's [flame] asks for them; with
    `wallclock`, where its [wallclock] does, every thread sampled whether on the CPU or waiting (under wallclock/)."""
    recipe, hosts, settings = context.recipe, context.hosts, context.settings
    flame = recipe.wallclock if wallclock else recipe.flame
    if flame is None or context.profile.name not in flame.profiles or not hosts.one_machine:
        return
    program = py_spy()
    for subject, cells in context.plan:
        if not isinstance(subject, Server) or subject.name not in context.started:
            continue
        for each in cells:
            cell = external_load(each)
            if cell is None or cell.name not in flame.cells:
                continue
            stem = context.run_dir / (WALLCLOCK_DIR if wallclock else FLAME_DIR) / f"{subject.name}__{cell.name}"
            if program is None:
                write_text(stem.with_suffix(".note.txt"), "py-spy is not installed: pip install -r requirements.txt\n")
                continue
            cut = _cut_short(context, flame.seconds)
            if cut:
                write_text(stem.with_suffix(".note.txt"), cut + "\n")
                context.reporter.step(f"{subject.label} {cell.label}: {cut}")
                continue
            context.reporter.status(f"sampling {subject.label}, {cell.label} with py-spy")
            server = context.started[subject.name].server
            argv = cell_argv(
                server, subject, cell, requests=WINDOW_REQUESTS, settings=settings, address=context.address
            )
            said = [
                _sample(
                    context,
                    argv,
                    Sampling(
                        program=program, pid=server.pid, seconds=flame.seconds, out=stem.with_suffix(suffix), how=how
                    ),
                )
                for suffix, how in ((".svg", ("flamegraph", wallclock)), (".txt", ("raw", wallclock)))
            ]
            problems = [problem for problem in said if problem]
            if problems:
                write_text(stem.with_suffix(".note.txt"), problems[0] + "\n")
            context.reporter.step(
                f"{subject.label} {cell.label}: " + (problems[0] if problems else "flame graph recorded")
            )


def _cut_short(context: RunContext, seconds: int) -> str:
    """Why a flame graph is not recorded ("" where it fits): its window would leave counting less than its
    smallest plan."""
    if context.deadline is None:
        return ""
    window = flame_window_s(seconds)
    left = context.deadline.left_s() - kept_for_counting_s(context.profile, context.servers(), context.measured)
    return "" if window <= left else f"not recorded: its {window:.0f} s do not fit what the time budget leaves"


@dataclass(frozen=True)
class Sampling:
    """One py-spy recording: the program, the process it samples, for how long, into which file, and `how` =
    (its format, whether wall clock)."""

    program: str
    pid: int
    seconds: int
    out: Path
    how: tuple[str, bool]


def _sample(context: RunContext, argv: list[str], sampling: Sampling) -> str:
    """One py-spy recording under load (`argv`, repeated until it is done); "" when it worked, else why not (in
    one line)."""
    program, pid, seconds, out, how = sampling.program, sampling.pid, sampling.seconds, sampling.out, sampling.how
    settings = context.settings
    kind, wallclock = how
    out.parent.mkdir(parents=True, exist_ok=True)
    # The SVG's title repeats the command: it names the program and the file plainly, no path of this machine.
    command = ["py-spy", "record", "--pid", str(pid), "--duration", str(seconds), "--rate", str(SAMPLE_RATE)]
    # --gil: only the thread running Python code; idle worker threads would fill the picture otherwise. Wall clock:
    # every thread, waiting or not, each stack under its thread's name.
    waiting = ["--idle", "--threads"] if wallclock else ["--gil"]
    command += ["--format", kind, "--output", out.name, "--nonblocking", *waiting]
    sampler = subprocess.Popen(
        command,
        executable=program,
        cwd=out.parent,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + seconds + 30
    try:
        while sampler.poll() is None and time.monotonic() < deadline:
            checkpoint()
            context.hosts.load.run_tool(argv, settings.load_cpu, settings.cell_timeout_s)
    finally:
        if sampler.poll() is None:
            sampler.kill()
        output = sampler.communicate()[0].decode(errors="replace")
    if sampler.returncode != 0 or not out.is_file():
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        out.unlink(missing_ok=True)
        return f"py-spy could not sample this server: {lines[-1] if lines else f'exit {sampler.returncode}'}"
    return ""
