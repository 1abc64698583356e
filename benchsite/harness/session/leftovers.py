"""What a killed run leaves behind, found by the next run and removed with `invoke recipe --clean`.

A run in progress keeps an owner file in its staging folder: the harness's PID, its temporary
folder and every server it started (PID and start time). SIGKILL runs no clean-up, so the next
run looks for staging folders whose owner is gone, reports them, and on request stops those
servers (by recorded PID, only if the same process is still there) and removes the folders.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from benchsite.results.store import STAGING_PREFIX, write_json

OWNER_FILE = "owner.json"
ORPHAN_AGE_S = 3600  # a staging folder with no owner file is a leftover once this old


def _started(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def record_owner(run_dir: Path, *, workroot: Path | None = None, server: object = None) -> None:
    """Note this process, its temporary folder and each server it starts in the staging folder."""
    path = run_dir / OWNER_FILE
    owner = (
        json.loads(path.read_text())
        if path.is_file()
        else {"pid": os.getpid(), "started": _started(os.getpid()), "workroot": None, "servers": []}
    )
    if workroot is not None:
        owner["workroot"] = str(workroot)
    pid = getattr(server, "pid", None)
    if pid is not None:
        owner["servers"].append({"pid": pid, "started": _started(pid), "name": getattr(server, "name", "")})
    write_json(path, owner)


def forget_owner(run_dir: Path) -> None:
    """The run is complete: its owner file is not part of it."""
    (run_dir / OWNER_FILE).unlink(missing_ok=True)


@dataclass(frozen=True)
class Leftover:
    """A staging folder whose run is gone, its temporary folder, and its servers still running."""

    staging: Path
    workroot: Path | None
    servers: tuple[tuple[int, str], ...]  # (pid, name) of recorded servers that still run

    def describe(self) -> str:
        parts = [f"staging folder {self.staging}"]
        if self.workroot is not None:
            parts.append(f"temporary folder {self.workroot}")
        parts += [f"server {name!r} (PID {pid}) still running" for pid, name in self.servers]
        return ", ".join(parts)


def _same_process(pid: int, started: float | None) -> bool:
    """The recorded process is still there and alive (a zombie that no parent reaped runs nothing)."""
    if started is None or _started(pid) != started:
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def find_leftovers(data_dir: Path) -> list[Leftover]:
    """Staging folders under data_dir/*/ whose owner process is gone."""
    found = []
    for staging in sorted(data_dir.glob(f"*/{STAGING_PREFIX}*")):
        if not staging.is_dir():
            continue
        owner_file = staging / OWNER_FILE
        if not owner_file.is_file():
            if time.time() - staging.stat().st_mtime > ORPHAN_AGE_S:
                found.append(Leftover(staging, None, ()))
            continue
        try:
            owner = json.loads(owner_file.read_text())
        except (OSError, ValueError):
            found.append(Leftover(staging, None, ()))
            continue
        if _same_process(owner.get("pid", -1), owner.get("started")):
            continue  # that run is still going
        workroot = Path(owner["workroot"]) if owner.get("workroot") and Path(owner["workroot"]).is_dir() else None
        servers = tuple(
            (s["pid"], s.get("name", "")) for s in owner.get("servers", []) if _same_process(s["pid"], s.get("started"))
        )
        found.append(Leftover(staging, workroot, servers))
    return found


def clean(leftover: Leftover) -> None:
    """Stop its servers' process groups (TERM, then KILL) and remove its folders."""
    for pid, _ in leftover.servers:
        for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait_s
            while psutil.pid_exists(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
    for folder in (leftover.workroot, leftover.staging):
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
