"""What the machine did during a repetition besides our load: CPU steal and other busy time.

Busy time comes from the kernel's per-CPU nanosecond counts of every task's time on a CPU (cgroup v1's
root `cpuacct.usage_percpu`) where they are readable and cover the whole machine; otherwise from
/proc/stat's clock ticks (10 ms steps, which a short repetition cannot resolve). Steal is only counted
in ticks.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from benchsite.tools.base import BusyClock

CPUACCT = Path("/sys/fs/cgroup/cpuacct")
# The whole machine's count, not a container's: at least this share of /proc/stat's busy time since boot.
WHOLE_MACHINE_SHARE = 0.9


@dataclass(frozen=True)
class CpuTimes:
    """Busy and stolen CPU seconds, summed over some CPUs, at one moment, and the clock busy came from."""

    busy_s: float
    steal_s: float
    clock: BusyClock = "ticks"

    def __sub__(self, earlier: CpuTimes) -> CpuTimes:
        return CpuTimes(self.busy_s - earlier.busy_s, self.steal_s - earlier.steal_s, _both(self, earlier))

    def __add__(self, other: CpuTimes) -> CpuTimes:
        return CpuTimes(self.busy_s + other.busy_s, self.steal_s + other.steal_s, _both(self, other))


def _both(a: CpuTimes, b: CpuTimes) -> BusyClock:
    return "cpuacct" if a.clock == b.clock == "cpuacct" else "ticks"


def _tick_busy(times: Any) -> float:
    return times.user + times.nice + times.system + getattr(times, "irq", 0.0) + getattr(times, "softirq", 0.0)


def cpuacct_ns(root: Path = CPUACCT) -> list[int] | None:
    """Every CPU's busy nanoseconds so far from cgroup v1's root cpuacct, or None where it is not readable."""
    try:
        fields = (root / "cpuacct.usage_percpu").read_text().split()
    except OSError:
        return None
    return [int(field) for field in fields] if fields and all(f.isdigit() for f in fields) else None


@functools.cache
def cpuacct_covers_the_machine(root: Path = CPUACCT) -> bool:
    """Whether the cpuacct counts are the whole machine's (a container sees only its own cgroup's)."""
    found = cpuacct_ns(root)
    ticks = sum(_tick_busy(t) for t in psutil.cpu_times(percpu=True))
    return found is not None and sum(found) / 1e9 >= WHOLE_MACHINE_SHARE * ticks


def cpu_times(cpus: tuple[int, ...], root: Path = CPUACCT) -> CpuTimes:
    """The busy time of the given CPUs so far (in nanoseconds where the kernel counts them, else in ticks of
    user, nice, system, irq and softirq) and their steal time."""
    per_cpu = psutil.cpu_times(percpu=True)
    chosen = [cpu for cpu in cpus if cpu < len(per_cpu)] or list(range(len(per_cpu)))
    steal = sum(getattr(per_cpu[cpu], "steal", 0.0) for cpu in chosen)
    exact = cpuacct_ns(root) if cpuacct_covers_the_machine(root) else None
    if exact is not None and len(exact) == len(per_cpu):
        return CpuTimes(sum(exact[cpu] for cpu in chosen) / 1e9, steal, "cpuacct")
    return CpuTimes(sum(_tick_busy(per_cpu[cpu]) for cpu in chosen), steal, "ticks")


def measured_cpus(server_cpu: int | None, load_cpu: int | None) -> tuple[int, ...]:
    """The CPUs a run's figures depend on: the pinned ones, else every CPU."""
    pinned = tuple(sorted({cpu for cpu in (server_cpu, load_cpu) if cpu is not None}))
    return pinned or tuple(range(psutil.cpu_count() or 1))
