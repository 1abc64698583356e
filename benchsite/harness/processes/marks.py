"""A server's processes wherever they went: each server starts in a cgroup of its own (cgroups.py), which every
process it forks stays in whatever it does, and with a mark of its own in its environment, which every process it
forks inherits unless it clears its environment (the mark is the signal where no cgroup can be made).

A server that forks, calls setsid() and exits has left both the process group the harness stops and the tree
under the process it started; its cgroup and its mark still name it, so it is found, stopped and never taken for
another's (a process in neither is never touched).
"""

from __future__ import annotations

import secrets

import psutil

from benchsite.harness.processes import cgroups
from benchsite.harness.processes.live import live_processes

MARK_ENV = "BENCHSITE_SERVER_MARK"


def new_mark() -> str:
    """A mark no other server of any run carries."""
    return secrets.token_hex(12)


def marked(mark: str) -> list[psutil.Process]:
    """The live processes (not zombies) of the server with `mark`: those in its cgroup, and those whose
    environment carries the mark; another user's processes, whose environment cannot be read, are never ours
    unless they are in its cgroup."""
    found = {}
    for pid in cgroups.members(mark):
        try:
            process = psutil.Process(pid)
            if process.status() != psutil.STATUS_ZOMBIE:
                found[pid] = process
        except psutil.Error:
            continue
    for process in live_processes():
        try:
            if process.environ().get(MARK_ENV) == mark and process.status() != psutil.STATUS_ZOMBIE:
                found.setdefault(process.pid, process)
        except psutil.Error:
            continue
    return sorted(found.values(), key=lambda process: process.pid)
