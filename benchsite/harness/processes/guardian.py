"""The guardian: a small process that outlives the harness by a few seconds, to stop what it left running.

The harness tells it, on a pipe, each process group it starts ("+ PGID START-TIME") and stops ("- PGID").
When the pipe ends, the harness has ended, however it ended (a normal exit, or SIGKILL, the OOM killer, a
CI time-out): every group still registered gets SIGTERM, then, after GRACE_S, SIGKILL. The parent-death
signal alone is not enough: a server may take TERM and then hang while it shuts down (Twisted did). The
start time guards against a reused PID. Run as a script, it imports nothing of the project; the harness's
side (`guarded`, `unguarded`) starts it with the first child.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

import psutil

from benchsite.harness.processes import cgroups
from benchsite.harness.processes.live import live_processes
from benchsite.harness.processes.marks import marked

GRACE_S = 5.0


def configured_grace_s() -> float:
    """GRACE_S, or BENCHSITE_GUARDIAN_GRACE_S where set (the tests' stuck server need not wait five seconds)."""
    return float(os.environ.get("BENCHSITE_GUARDIAN_GRACE_S", GRACE_S))


def _members(pgid: int, created: float) -> list[psutil.Process]:
    """The live processes of a group whose leader started at `created` (none if that leader is gone and the
    id could have been reused)."""
    found = []
    for process in live_processes():
        try:
            if os.getpgid(process.pid) == pgid and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except (psutil.Error, ProcessLookupError):
            continue
    try:
        leader = psutil.Process(pgid)
        if abs(leader.create_time() - created) > 0.01:
            return []  # another process has that id now
    except psutil.NoSuchProcess:
        pass  # the leader is gone; its group's members are still the run's
    return found


def stop_groups(groups: dict[int, float], grace_s: float = GRACE_S, marks: frozenset[str] = frozenset()) -> None:
    """TERM every registered group that is still alive and every process carrying a registered mark (a server
    that left its group), then KILL what is left after the grace period."""
    alive = {pgid: created for pgid, created in groups.items() if _members(pgid, created)}
    for pgid in alive:
        try:
            os.killpg(pgid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    strays = [process for mark in marks for process in marked(mark)]
    for process in strays:
        try:
            process.terminate()
        except psutil.NoSuchProcess:
            pass
    deadline = time.monotonic() + grace_s
    while (alive or strays) and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = {pgid: created for pgid, created in alive.items() if _members(pgid, created)}
        strays = [process for mark in marks for process in marked(mark)]
    for process in [*(p for pgid, created in alive.items() for p in _members(pgid, created)), *strays]:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    settle = time.monotonic() + 2.0  # the kernel takes a killed process out of its cgroup as it ends
    while any(cgroups.members(mark) for mark in marks) and time.monotonic() < settle:
        time.sleep(0.05)
    for mark in marks:
        cgroups.remove(mark)


class _Guardian:
    """This harness's guardian (guardian.py), started with its first child: it stops, after the harness has
    ended however it ended, every process group the harness started and did not stop itself."""

    process: subprocess.Popen[str] | None = None

    @classmethod
    def tell(cls, line: str) -> None:
        if cls.process is None or cls.process.poll() is not None:
            cls.process = subprocess.Popen(
                [sys.executable, __file__],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                text=True,
                start_new_session=True,  # not in the harness's group: a signal to that group is not its
            )
        try:
            assert cls.process.stdin is not None
            cls.process.stdin.write(line + "\n")
            cls.process.stdin.flush()
        except (BrokenPipeError, OSError):
            cls.process = None  # it is gone: the parent-death signal still stops what it would have


def guarded(popen: subprocess.Popen[Any], mark: str | None = None) -> None:
    """Register a child's process group with the guardian (the child leads its own group), and the mark its
    processes carry where it has one."""
    try:
        created = psutil.Process(popen.pid).create_time()
    except psutil.NoSuchProcess:
        return
    _Guardian.tell(f"+ {popen.pid} {created}" + (f" {mark}" if mark else ""))


def unguarded(popen: subprocess.Popen[Any]) -> None:
    """The harness stopped this child's group (and its marked processes) itself: the guardian forgets them."""
    _Guardian.tell(f"- {popen.pid}")


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the harness's to handle; the pipe says the rest
    groups: dict[int, float] = {}
    marks: dict[int, str] = {}
    for line in sys.stdin:
        parts = line.split()
        if len(parts) in (3, 4) and parts[0] == "+":
            groups[int(parts[1])] = float(parts[2])
            if len(parts) == 4:
                marks[int(parts[1])] = parts[3]
        elif len(parts) == 2 and parts[0] == "-":
            groups.pop(int(parts[1]), None)
            marks.pop(int(parts[1]), None)
    stop_groups(groups, configured_grace_s(), frozenset(marks.values()))


if __name__ == "__main__":
    main()
