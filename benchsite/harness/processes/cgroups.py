"""A cgroup for each server: what a server's processes cannot shed. Every process a server forks stays in the
cgroup it started in, whatever it does to its environment, its process group or its session (a double fork, an
`execve` with an empty environment, `env -i`): the cgroup's member list names them all.

The groups are directories of the cgroup v2 hierarchy, made under the harness's own cgroup (root may; so may a
user whose cgroup systemd delegated). Where none can be made (no cgroup v2 mounted, no right to write it), the
server has none and the harness falls back on its other signals (marks.py, and adopting orphans: processes.py).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

PREFIX = "benchsite-server-"


def _cgroup2_mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, _, after = line.partition(" - ")
        fields, before = after.split(), line.split()
        if fields and fields[0] == "cgroup2" and len(before) > 4:
            return Path(before[4])
    return None


def _own_cgroup() -> str | None:
    """This process's cgroup v2 path (the "0::" line of /proc/self/cgroup)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    return next((line[3:] for line in lines if line.startswith("0::")), None)


@cache
def home() -> Path | None:
    """The directory the servers' cgroups are made in, where this process may make them (None: nowhere)."""
    mount, own = _cgroup2_mount(), _own_cgroup()
    if mount is None or own is None:
        return None
    directory = mount / own.lstrip("/")
    probe = directory / f"{PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return None
    return directory


def path_of(mark: str) -> Path | None:
    """The cgroup of the server with `mark` (None: servers get none on this machine)."""
    directory = home()
    return None if directory is None else directory / f"{PREFIX}{mark}"


def make(mark: str) -> Path | None:
    """Make the server's cgroup before it starts; None where none can be made."""
    path = path_of(mark)
    if path is None:
        return None
    try:
        path.mkdir()
    except OSError:
        return None
    return path


def enter(path: Path) -> None:
    """In the server's process between fork and exec: move itself into its cgroup."""
    (path / "cgroup.procs").write_text(str(os.getpid()))


def members(mark: str) -> list[int]:
    """The PIDs in the server's cgroup now (none once it is removed, or where it has none)."""
    path = path_of(mark)
    if path is None:
        return []
    try:
        return [int(pid) for pid in (path / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def remove(mark: str) -> None:
    """Remove the server's cgroup once its processes are gone (a cgroup still holding one stays)."""
    path = path_of(mark)
    if path is not None:
        try:
            path.rmdir()
        except OSError:
            pass
