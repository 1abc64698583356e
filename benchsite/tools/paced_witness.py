"""benchsite-paced's witness: a second open-loop sender (benchsite-witness, the Python loop) that measures the same
server at a low rate while the C loop makes the load, so that a load whose figures are the tool's own queue shows
as a disagreement between the two.

The witness runs in a process of its own, pinned to the CPU given (the server's, on one machine: never the
tool's, whose saturation it is there to see) and, where the system allows, at real-time priority, so that its
few requests are read the moment they are answered rather than after the server's time slice. It starts first
and says when its schedule begins; the tool's begins just after, and both run for the same time. Its report is
appended to the tool's, each line after "witness ".
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PREFIX = "witness "
READY = "schedule starts"
PRIORITY = 10  # SCHED_FIFO: above every ordinary process, far below the kernel's own threads


def _pin_and_raise(cpu: int | None) -> None:
    """In the witness's process before it starts: its CPU and, where permitted, real-time priority."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PRIORITY))
    except OSError:
        pass  # not permitted (not root): it runs at ordinary priority, as the report says


class Witness:
    """A running witness: start it, then `report()` once the tool's own load is over."""

    def __init__(self, argv: list[str], cpu: int | None) -> None:
        program = str(Path(sys.executable).with_name("benchsite-witness"))
        env = {**os.environ, "BENCHSITE_WITNESS_READY": "1"}
        self.process = subprocess.Popen(
            [program, *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=lambda: _pin_and_raise(cpu),  # the tool is single-threaded here
        )
        assert self.process.stderr is not None
        first = self.process.stderr.readline()  # its schedule is about to start, or it failed
        self.early_error = "" if first.strip() == READY else first.strip()

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
