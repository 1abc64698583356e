"""Who a server's processes are: its process group's, those in its cgroup or carrying its mark (marks.py), and,
where it has no cgroup, what the harness adopted from it (a double fork that also cleared its environment)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import time
from collections.abc import Sequence
from typing import Any

import psutil

from benchsite.harness.processes import cgroups
from benchsite.harness.processes.marks import marked

POLL_INTERVAL_S = 0.05
_LIBC = ctypes.CDLL(None, use_errno=True)


PR_SET_CHILD_SUBREAPER = 36  # prctl(2): orphans of this process's descendants become its children, not init's


def adopt_orphans() -> None:
    """Make this process the subreaper of what it starts: a server's process that double-forks is adopted here,
    not by init, so that where no cgroup holds it (and it cleared its mark) it is still found (`adopted`)."""
    _LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1)


def adopted(since: float) -> list[psutil.Process]:
    """Processes this one adopted (a descendant's orphans) that left its session, as a daemon does with setsid(),
    started after `since`: none of them is a child it started itself, which all stay in its session."""
    try:
        me = psutil.Process()
        children = me.children()
    except psutil.Error:
        return []
    session = os.getsid(0)
    found = []
    for child in children:
        try:
            if os.getsid(child.pid) == session or child.create_time() < since:
                continue
            if is_running(child):
                found.append(child)
            else:  # an adopted process that ended is this one's to reap
                os.waitpid(child.pid, os.WNOHANG)
        except (psutil.Error, OSError):
            continue
    return found


def server_processes(marks: Sequence[str], since: float | None = None) -> list[psutil.Process]:
    """The processes of the servers with `marks`: in their cgroups or carrying a mark, and, where the servers
    have no cgroup, what this process adopted from them (`since`: when the earliest of them started)."""
    found = [proc for mark in marks for proc in marked(mark)]
    if since is not None and any(cgroups.path_of(mark) is None for mark in marks):
        known = {proc.pid for proc in found}
        found += [proc for proc in adopted(since) if proc.pid not in known]
    return found


def group_of(popen: subprocess.Popen[Any]) -> list[psutil.Process]:
    """The process and its descendants, as they are now (none once it is reaped: its PID may be another's)."""
    if popen.returncode is not None:
        return []
    try:
        leader = psutil.Process(popen.pid)
        return [leader, *leader.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def still_running(procs: list[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    """Those of the processes still running after up to timeout_s. A zombie is not: it holds no port and runs
    nothing, and its reaping is its parent's (a worker whose master exited first waits for init, which took
    1-2 s on the test VM; psutil.wait_procs waited for that)."""
    deadline = time.monotonic() + timeout_s
    while True:
        running = [proc for proc in procs if is_running(proc)]
        if not running or time.monotonic() >= deadline:
            return running
        time.sleep(POLL_INTERVAL_S / 2)


def is_running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
