"""What a server holds in memory: USS and PSS summed over its process tree (psutil reads /proc's smaps),
once after it started and, sampled in a thread, at its peak during each repetition.

USS counts the pages only that process maps; PSS shares every shared page between the processes mapping
it, so a forking server's workers are summed without counting their shared pages twice.
"""

from __future__ import annotations

import os
import threading
import time

import psutil

from benchsite.tools.memory import MemoryPeak, MemorySample, as_peak

# How often a repetition samples its server's memory: each sample reads smaps of every process of the
# tree (about half a millisecond a process), a small share of the load tool's CPU, never the server's.
SAMPLE_EVERY_S = 0.25


def tree_memory(root: psutil.Process) -> MemorySample | None:
    """USS and PSS of a process and its live children, summed (None: it has exited, or its PID is another
    process's now: psutil's is_running compares the start time it was created with)."""
    try:
        if not root.is_running() or root.status() == psutil.STATUS_ZOMBIE:
            return None
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return None
    uss = pss = counted = 0
    for process in processes:
        try:
            info = process.memory_full_info()
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        if info.uss == 0:  # exiting: its address space is already gone (a live process keeps a page of its own)
            continue
        uss += info.uss
        pss += info.pss
        counted += 1
    return MemorySample(uss, pss, counted) if counted else None


def process_of(pid: int) -> psutil.Process | None:
    """The process that has `pid` now, held by its start time (None: there is none)."""
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


class PeakSampler:
    """Samples a process tree's memory at `start()`, every `every_s` seconds in a thread pinned to `cpu` until
    `stop()`, and at `stop()`; with `every_s` None, at the start and the stop alone (an open-loop load, whose
    schedule a sample on its CPU would delay). It holds the process it was given, not its PID: once that process
    is gone it reads nothing more (a process that got its PID meanwhile is another's)."""

    def __init__(self, root_pid: int, cpu: int | None, every_s: float | None = SAMPLE_EVERY_S) -> None:
        self.root_pid = root_pid
        self.root = process_of(root_pid)
        self.cpu = cpu
        self.every_s = every_s
        self.samples: list[MemorySample] = []
        self.cpu_s = 0.0  # the sampling thread's own CPU time: the run subtracts it from others' busy time
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._sample, name=f"memory-{root_pid}", daemon=True)

    def _take(self) -> None:
        if self.root is None:
            return
        began = time.thread_time()
        sample = tree_memory(self.root)
        if sample is None:
            self.root = None  # gone: whatever has its PID later is not this server
            self._stopped.set()
        else:
            self.samples.append(sample)
        self.cpu_s += time.thread_time() - began

    def _sample(self) -> None:
        if self.cpu is not None:  # beside the load tool, never on the server's CPU
            os.sched_setaffinity(threading.get_native_id(), {self.cpu})
        assert self.every_s is not None
        while not self._stopped.wait(self.every_s):
            self._take()

    def start(self) -> PeakSampler:
        self._take()
        if self.every_s is not None:
            self._thread.start()
        return self

    def stop(self) -> MemoryPeak | None:
        """Stop sampling after one last sample; the peak of what was seen."""
        if self._thread.is_alive():
            self._stopped.set()
            self._thread.join()
        self._take()
        return as_peak(self.samples)
