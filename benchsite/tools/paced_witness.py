"""benchsite-paced's witness: a second open-loop sender (benchsite-witness, the Python loop) that measures the same
server at a low rate while the C loop makes the load, so that a load whose figures are the tool's own queue shows
as a disagreement between the two.

The witness runs in a process of its own, pinned to the CPU given (the server's, on one machine: never the
tool's, whose saturation it is there to see) and, for its schedule alone and where the system allows, at
real-time priority, so that its few requests are read the moment they are answered rather than after the
server's time slice. Its start (the interpreter, its imports) runs at ordinary priority: at real-time priority
it froze the server's CPU for 0.3-0.5 s before each load. It starts first and says when its schedule begins; the
tool's begins just after, and both run for the same time. It dies with the tool. Its report is appended to the
tool's, each line after "witness ".
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

PREFIX = "witness "
READY = "schedule starts"
PRIORITY = 10  # SCHED_FIFO: above every ordinary process, far below the kernel's own threads
READY_WITHIN_S = 60.0  # its start, imports included, on a slow machine beside busy ones
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent ends


class WitnessError(Exception):
    """The witness could not start: one line saying why."""


def _pin_and_tie(cpu: int | None) -> None:
    """In the witness's process before it starts: its CPU, and SIGKILL when the tool that started it ends (a
    killed tool leaves no witness sending load). Its priority stays ordinary until its schedule."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) refused")


def to_real_time() -> None:
    """In the witness, its schedule about to begin: real-time priority where permitted (else it stays ordinary,
    as its report says)."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
    except OSError:
        pass  # not permitted (not root)


def usable_cpu(text: str) -> int:
    """A CPU this machine has (for --witness-cpu); a ValueError naming the ones it has."""
    cpus = sorted(os.sched_getaffinity(0) | set(range(os.cpu_count() or 1)))
    try:
        cpu = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a CPU number: give one of {cpus[0]}-{cpus[-1]}") from None
    if cpu not in cpus:
        raise ValueError(f"CPU {cpu} is not on this machine: give one of {cpus[0]}-{cpus[-1]}")
    return cpu


class Witness:
    """A running witness: start it, then `report()` once the tool's own load is over."""

    def __init__(self, argv: list[str], cpu: int | None, program: str | None = None) -> None:
        program = program or str(Path(sys.executable).with_name("benchsite-witness"))
        env = {**os.environ, "BENCHSITE_WITNESS_READY": "1"}
        try:
            self.process = subprocess.Popen(
                [program, *argv],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                preexec_fn=lambda: _pin_and_tie(cpu),  # the tool is single-threaded here
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise WitnessError(f"the witness could not start on CPU {cpu}: {error}") from None
        assert self.process.stderr is not None
        # Its schedule is about to start, or it failed; no line within the time: it hangs, and is stopped.
        ready, _, _ = select.select([self.process.stderr], [], [], READY_WITHIN_S)
        first = self.process.stderr.readline() if ready else ""
        if not ready:
            self.process.kill()
            first = f"no ready line within {READY_WITHIN_S:g} s: stopped"
        self.early_error = "" if first.strip() == READY else first.strip() or "it ended before its schedule"

    def report(self, timeout_s: float) -> str:
        """Its report, each line after "witness " (or one line saying why there is none)."""
        try:
            out, err = self.process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            return f"{PREFIX}failed: no report within {timeout_s:g} s\n"
        if self.process.returncode != 0 or not out:
            why = self.early_error or (err.strip().splitlines() or ["no message"])[-1]
            return f"{PREFIX}failed: exit code {self.process.returncode}: {why}\n"
        return "".join(f"{PREFIX}{line}\n" for line in out.splitlines())


def scheduling() -> str:
    """How this process is scheduled, for its report: "real-time on CPU 0", "ordinary on CPUs 0-1"."""
    cpus = sorted(os.sched_getaffinity(0))
    where = f"CPU {cpus[0]}" if len(cpus) == 1 else f"CPUs {cpus[0]}-{cpus[-1]}"
    kind = "real-time" if os.sched_getscheduler(0) == os.SCHED_FIFO else "ordinary"
    return f"{kind} on {where}"


def back_to_ordinary() -> None:
    """In the witness, its schedule over: back to ordinary priority before it makes its report and exits (at
    real-time priority those milliseconds would be taken from the server while the tool's load still runs)."""
    if os.sched_getscheduler(0) == os.SCHED_FIFO:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def announce_ready() -> None:
    """In the witness: say on stderr that its schedule starts now (when started as a witness)."""
    if os.environ.get("BENCHSITE_WITNESS_READY"):
        sys.stderr.write(READY + "\n")
        sys.stderr.flush()
