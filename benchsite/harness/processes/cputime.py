"""A server's CPU time to the nanosecond: the scheduler's own count of every task's time on a CPU.

The kernel's clock-tick counts (psutil's cpu_times, 10 ms steps) make CPU per request come in steps
of 10 µs on a thousand requests. `/proc/PID/task/TID/schedstat` counts each thread's time on a CPU in
nanoseconds, but only while the thread lives; the tick counts of a process include its exited threads.
So a repetition's CPU comes from the nanosecond counts when every task seen before it is still there
after it and the tick counts agree, and from the tick counts otherwise (a server that starts a thread
per connection), and the repetition records which clock it used.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import psutil

PROC = Path("/proc")
TICK_S = 0.01  # the clock-tick counts' step (USER_HZ = 100 on Linux)

CpuClock = Literal["schedstat", "ticks"]


@dataclass(frozen=True)
class CpuReading:
    """A process tree's CPU time at one instant: clock ticks (exited threads included) and each live
    task's nanoseconds, by "pid/tid"."""

    ticks_s: float
    tasks_ns: dict[str, int] = field(default_factory=dict)
    processes: int = 1
    system_ticks_s: float = 0.0  # the kernel's part of ticks_s (time in system calls on the tree's behalf)

    def to_json(self) -> dict[str, object]:
        return {
            "ticks_s": self.ticks_s,
            "tasks_ns": self.tasks_ns,
            "processes": self.processes,
            "system_ticks_s": self.system_ticks_s,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> CpuReading:
        tasks = data["tasks_ns"]
        assert isinstance(tasks, dict)
        return cls(
            float(str(data["ticks_s"])),
            {str(k): int(v) for k, v in tasks.items()},
            int(str(data["processes"])),
            float(str(data.get("system_ticks_s", 0.0))),
        )


def task_runtimes(pids: Iterable[int], proc: Path = PROC) -> dict[str, int]:
    """Each live task's time on a CPU in ns (the first field of its schedstat), by "pid/tid"."""
    found: dict[str, int] = {}
    for pid in pids:
        try:
            tasks = list((proc / str(pid) / "task").iterdir())
        except OSError:
            continue  # the process exited
        for task in tasks:
            try:
                fields = (task / "schedstat").read_text().split()
            except OSError:
                continue  # the thread exited, or schedstat is not there (a kernel without it)
            if fields and fields[0].isdigit():
                found[f"{pid}/{task.name}"] = int(fields[0])
    return found


def tree_reading(root_pid: int, proc: Path = PROC) -> CpuReading:
    """The CPU time of a process and its live children (zero once it has exited)."""
    try:
        root = psutil.Process(root_pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return CpuReading(0.0)
    ticks = system = 0.0
    alive = []
    for process in procs:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        ticks += times.user + times.system
        system += times.system
        alive.append(process.pid)
    return CpuReading(ticks, task_runtimes(alive, proc), len(alive), system)


def system_between(before: CpuReading, after: CpuReading) -> float:
    """The kernel CPU seconds between two readings, from the clock ticks (sum them over many repetitions:
    one repetition's share is only good to a tick)."""
    return max(0.0, after.system_ticks_s - before.system_ticks_s)


def cpu_between(before: CpuReading, after: CpuReading) -> tuple[float, CpuClock]:
    """The CPU seconds spent between two readings, and the clock they come from: the nanosecond counts
    when no task was lost and the tick counts agree with them to their resolution, else the ticks."""
    ticks = max(0.0, after.ticks_s - before.ticks_s)
    lost = before.tasks_ns.keys() - after.tasks_ns.keys()
    if not after.tasks_ns or lost:
        return ticks, "ticks"
    nanoseconds = sum(ns - before.tasks_ns.get(task, 0) for task, ns in after.tasks_ns.items())
    exact = max(0, nanoseconds) / 1e9
    # each process's user and system counts are rounded down to a tick, at each of the two readings
    resolution = 2 * TICK_S * max(before.processes, after.processes) + 0.02 * ticks
    if ticks - exact > resolution:  # threads born and gone in between took time the ns counts missed
        return ticks, "ticks"
    return exact, "schedstat"
