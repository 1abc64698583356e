"""A server's processes wherever they went: each server starts with a mark of its own in its environment, which
every process it forks inherits, a daemon that left its process group and its parent included.

A server that forks, calls setsid() and exits has left both the process group the harness stops and the tree
under the process it started; its mark still names it, so it is found, stopped and never taken for another's
(a process that does not carry the mark is never touched).
"""

from __future__ import annotations

import secrets

import psutil

from benchsite.harness.processes.live import live_processes

MARK_ENV = "BENCHSITE_SERVER_MARK"


def new_mark() -> str:
    """A mark no other server of any run carries."""
    return secrets.token_hex(12)


def marked(mark: str) -> list[psutil.Process]:
    """The live processes (not zombies) whose environment carries `mark`; another user's processes, whose
    environment cannot be read, are never ours."""
    found = []
    for process in live_processes():
        try:
            if process.environ().get(MARK_ENV) == mark and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found
