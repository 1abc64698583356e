"""Bounded commands beside the servers: a load tool pinned to its CPU, and helpers run side by side; each in
a process group of its own, killed at its wall-clock limit, its output kept verbatim."""

from __future__ import annotations

import resource
import shlex
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchsite.errors import BenchError
from benchsite.harness.processes.guardian import guarded, unguarded
from benchsite.harness.processes.processes import prepare_child, stop_process_group
from benchsite.harness.processes.signals import signal_for_test, signals_held


@dataclass(frozen=True)
class ToolRun:
    """A finished load-tool command: argv, exit code, verbatim output, CPU and wall time."""

    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    timed_out: bool


def _spawn_piped(argv: list[str], cpu: int | None, text: bool = False) -> subprocess.Popen[Any]:
    """A child in a process group of its own, pinned to `cpu` (None: not pinned), that dies with the harness;
    no input, its output piped."""
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=text,
        process_group=0,
        preexec_fn=prepare_child(cpu),
    )


def run_tool(argv: list[str], cpu: int | None, timeout_s: float) -> ToolRun:
    """Run a load tool pinned, in its own group, killed at the wall-clock limit or on any exception."""
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    try:
        popen = _spawn_piped(argv, cpu)
    except FileNotFoundError:
        raise BenchError(
            f"no {argv[0]} on this system: run `.venv/bin/invoke setup` (needs root) to install the load tools"
        ) from None
    guarded(popen)
    signal_for_test("tool-started")
    timed_out = False
    try:
        stdout, stderr = popen.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        stop_process_group(popen, term_timeout_s=2)
        stdout, stderr = popen.communicate()
    finally:
        if popen.poll() is None:
            stop_process_group(popen, term_timeout_s=2)
        unguarded(popen)
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (usage_after.ru_utime - usage_before.ru_utime) + (usage_after.ru_stime - usage_before.ru_stime)
    return ToolRun(
        argv=argv,
        exit_code=popen.returncode,
        stdout=stdout.decode(errors="replace"),
        stderr=stderr.decode(errors="replace"),
        wall_s=time.monotonic() - started,
        cpu_s=cpu_s,
        timed_out=timed_out,
    )


@dataclass(frozen=True)
class HelperRun:
    """A finished set-up command (pip, venv: nothing measured): argv, exit code and output."""

    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str


def run_helpers(commands: Sequence[list[str]], timeout_s: float) -> list[HelperRun]:
    """Run set-up commands all at once, each in a group of its own that dies with the harness, and stop every
    one still running on any way out (an interrupt, a time-out). Their runs come back in the commands' order."""
    popens: list[subprocess.Popen[str]] = []
    try:
        with signals_held():  # each child is guarded before an interrupt can come
            for argv in commands:
                try:
                    popen = _spawn_piped(argv, None, text=True)
                except OSError as error:
                    raise BenchError(f"cannot run {argv[0]}: {error.strerror}") from None
                guarded(popen)
                popens.append(popen)
        deadline = time.monotonic() + timeout_s
        runs = []
        for argv, popen in zip(commands, popens, strict=True):
            try:
                stdout, stderr = popen.communicate(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise BenchError(f"`{shlex.join(argv)}` took over {timeout_s:g} s and was stopped") from None
            runs.append(HelperRun(argv=argv, exit_code=popen.returncode, stdout=stdout, stderr=stderr))
        return runs
    finally:
        for popen in popens:
            if popen.poll() is None:
                stop_process_group(popen, term_timeout_s=2)
                popen.communicate()  # closes its pipes
            unguarded(popen)
