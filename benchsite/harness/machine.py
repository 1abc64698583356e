"""What the machine did during a repetition besides our load: CPU steal and other busy time."""

from __future__ import annotations

from dataclasses import dataclass

import psutil


@dataclass(frozen=True)
class CpuTimes:
    """Busy and stolen CPU seconds, summed over some CPUs, at one moment."""

    busy_s: float
    steal_s: float

    def __sub__(self, earlier: CpuTimes) -> CpuTimes:
        return CpuTimes(self.busy_s - earlier.busy_s, self.steal_s - earlier.steal_s)

    def __add__(self, other: CpuTimes) -> CpuTimes:
        return CpuTimes(self.busy_s + other.busy_s, self.steal_s + other.steal_s)


def cpu_times(cpus: tuple[int, ...]) -> CpuTimes:
    """The busy time (user, nice, system, irq, softirq) and the steal time of the given CPUs so far."""
    per_cpu = psutil.cpu_times(percpu=True)
    chosen = [per_cpu[cpu] for cpu in cpus if cpu < len(per_cpu)] or per_cpu
    busy = sum(t.user + t.nice + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0) for t in chosen)
    return CpuTimes(busy, sum(getattr(t, "steal", 0.0) for t in chosen))


def measured_cpus(server_cpu: int | None, load_cpu: int | None) -> tuple[int, ...]:
    """The CPUs a run's figures depend on: the pinned ones, else every CPU."""
    pinned = tuple(sorted({cpu for cpu in (server_cpu, load_cpu) if cpu is not None}))
    return pinned or tuple(range(psutil.cpu_count() or 1))
