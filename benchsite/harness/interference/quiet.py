"""Before a run: is the machine quiet? Load, others' CPU time on the CPUs the run pins, steal, and the
frequency policy (after pyperf's `system show`): a short first look, then, where that look finds others
at work, a full second's sample and a bounded wait for the machine to settle."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from benchsite.errors import BenchError
from benchsite.harness.basics.machine import measured_cpus
from benchsite.harness.hosts.placement import LocalHost, Placement
from benchsite.harness.processes.live import live_processes
from benchsite.model.conf import Settings
from benchsite.model.interference import MachineCheck
from benchsite.tools.base import BusyClock

# The first look: long enough to resolve others at a few per cent of the run's CPUs. In /proc/stat's 10 ms
# ticks a quarter second (a tick is 4 % of it); in cpuacct's nanoseconds a tenth is exact to far below that.
FIRST_LOOK_S: dict[BusyClock, float] = {"ticks": 0.25, "cpuacct": 0.1}
SAMPLE_S = 1.0  # every later sample: one that decides whether to wait
# Overrides every conf's settle_wait_s for the runs of this process and its children: the test suite sets 0,
# since its runs check what holds on a busy machine rather than wait for a quiet one.
SETTLE_ENV = "BENCHSITE_SETTLE_WAIT_S"
NOT_EXPOSED = "not exposed"
CPU_SYSFS = Path("/sys/devices/system/cpu")


def governor(cpu: int, sysfs: Path = CPU_SYSFS) -> str:
    """The CPU's frequency governor ("performance", "powersave"...), where the kernel exposes one."""
    try:
        return (sysfs / f"cpu{cpu}" / "cpufreq" / "scaling_governor").read_text().strip() or NOT_EXPOSED
    except OSError:
        return NOT_EXPOSED


def boost(sysfs: Path = CPU_SYSFS) -> str:
    """Turbo/boost ("on", "off"), from cpufreq's boost switch or intel_pstate's no_turbo."""
    for path, on in ((sysfs / "cpufreq" / "boost", "1"), (sysfs / "intel_pstate" / "no_turbo", "0")):
        try:
            return "on" if path.read_text().strip() == on else "off"
        except OSError:
            continue
    return NOT_EXPOSED


def _own_pids() -> set[int]:
    me = psutil.Process()
    return {me.pid, *(child.pid for child in me.children(recursive=True))}


def _busiest(primed: dict[int, psutil.Process], limit: int = 2) -> tuple[str, ...]:
    """The other processes that took most CPU since they were primed: "python3 (87 %)" (names only)."""
    own = _own_pids()
    found = []
    for pid, process in primed.items():
        if pid in own:
            continue
        try:
            found.append((process.cpu_percent(None), process.name()))
        except psutil.Error:
            continue  # it ended meanwhile
    found.sort(reverse=True)
    return tuple(f"{name} ({percent:.0f} %)" for percent, name in found[:limit] if percent >= 5)


def _primed() -> dict[int, psutil.Process]:
    primed = {}
    for process in live_processes():
        try:
            process.cpu_percent(None)
            primed[process.pid] = process
        except psutil.Error:
            continue
    return primed


def sample(hosts: Placement, settings: Settings, waited_s: float, seconds: float | None = SAMPLE_S) -> MachineCheck:
    """Others' CPU time on the run's CPUs over `seconds` (None: the first look's, for the clock busy time
    comes from), with the load average and frequency policy."""
    local = isinstance(hosts.server, LocalHost) and hosts.one_machine
    primed = _primed() if local else {}
    before = hosts.cpu_times(settings.server_cpu, settings.load_cpu)
    started = time.monotonic()
    time.sleep(FIRST_LOOK_S[before.clock] if seconds is None else seconds)
    taken = hosts.cpu_times(settings.server_cpu, settings.load_cpu) - before
    elapsed = time.monotonic() - started
    busy, steal = max(0.0, taken.busy_s) / elapsed, max(0.0, taken.steal_s) / elapsed
    cpus = tuple(c for c in (settings.server_cpu, settings.load_cpu) if c is not None)
    first_cpu = measured_cpus(settings.server_cpu, settings.load_cpu)[0]
    return MachineCheck(
        load_average=tuple(round(value, 2) for value in os.getloadavg()),
        cpus=cpus,
        sample_s=round(elapsed, 3),
        busy_cpus=round(busy, 3),
        steal_cpus=round(steal, 3),
        busiest=_busiest(primed) if local else (),
        governor=governor(first_cpu) if local else "not read on a remote host",
        boost=boost() if local else "not read on a remote host",
        waited_s=round(waited_s, 1),
        quiet=busy + steal <= settings.disturbed_share,
    )


def settle_wait_s(settings: Settings) -> float:
    """How long a run waits for a busy machine to settle: the conf's settle_wait_s, or BENCHSITE_SETTLE_WAIT_S."""
    given = os.environ.get(SETTLE_ENV)
    if given is None:
        return settings.settle_wait_s
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 3600:
        raise BenchError(f"{SETTLE_ENV}={given!r}: give the seconds to wait for a quiet machine, 0 to 3600")
    return seconds


def check_machine(
    hosts: Placement,
    settings: Settings,
    wait: bool,
    say: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
) -> MachineCheck:
    """The machine's state before a run; on a busy machine, wait up to settings.settle_wait_s (unless told not
    to) for others' CPU time on the run's CPUs to fall below the share that marks a repetition disturbed."""
    started = clock()
    found = sample(hosts, settings, 0.0, seconds=None)  # the first look
    if found.quiet:
        return found
    found = sample(hosts, settings, 0.0)  # a second's look before calling the machine busy
    settle_s = settle_wait_s(settings)
    if found.quiet or not wait or not settle_s:
        return found
    say(
        f"the machine is busy ({found.summary()}): waiting up to {settle_s:g} s for it to settle "
        "(--no-wait starts at once)"
    )
    while not found.quiet and clock() - started < settle_s:
        found = sample(hosts, settings, clock() - started)
    return found
