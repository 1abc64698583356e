"""One scratch folder for every temporary file of a test session, the runs' and servers' own included.

The suite writes and removes tens of thousands of files: copies of data/, runs, site builds. Where the
machine has a RAM-backed /dev/shm with room to spare, the folder is made there: on a disk mounted with
`discard` (as this project's VM is), each file made and removed costs a trip to the disk, and a copy of
data/ takes 5.9 s against 0.9 s in RAM. A run the tests SIGKILL leaves its temporary folder behind (by
design: the next run reports it); here that folder goes with the session's. The folder is removed when the
session passes and kept, with its path printed, when it fails (the last KEPT of those stay, as pytest keeps its
own). A folder whose session still runs (another `invoke test` beside this one) is never removed: each names its
owner. A TMPDIR the user set is left alone.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import psutil

IN_MEMORY = Path("/dev/shm")
ROOM_NEEDED = 4 * 1024**3  # the suite's peak is well under 2 GB
PREFIX = "benchsite-tests-"
KEPT = 3
OWNER = "owner.json"  # in each folder: the pid and start time of the session that made it


def _roomy_memory_folder() -> Path | None:
    try:
        found = os.statvfs(IN_MEMORY)
    except OSError:
        return None
    if found.f_flag & (os.ST_RDONLY | os.ST_NOEXEC) or found.f_bavail * found.f_frsize < ROOM_NEEDED:
        return None
    return IN_MEMORY


def make_session_scratch() -> Path | None:
    """Point TMPDIR (this process's and every child's) at a new folder; None where the user chose one."""
    if os.environ.get("TMPDIR"):
        return None
    parent = _roomy_memory_folder() or Path(tempfile.gettempdir())
    kept = sorted(
        (folder for folder in parent.glob(f"{PREFIX}*") if not _running(folder)),
        key=lambda folder: folder.stat().st_mtime,
    )
    for old in kept[: max(0, len(kept) - (KEPT - 1))]:  # failed sessions' folders, beyond the last few
        shutil.rmtree(old, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
    folder.chmod(0o755)  # servers that drop privileges (nginx's workers) reach their files through it
    me = psutil.Process()
    (folder / OWNER).write_text(json.dumps({"pid": me.pid, "started": me.create_time()}), encoding="utf-8")
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # tempfile reads TMPDIR again
    return folder


def _running(folder: Path) -> bool:
    """Whether the session that made the folder still runs (its pid alive with the start time it wrote)."""
    try:
        owner = json.loads((folder / OWNER).read_text(encoding="utf-8"))
        return psutil.Process(owner["pid"]).create_time() == owner["started"]
    except (OSError, ValueError, KeyError, TypeError, psutil.Error):
        return False


def write_bytecode() -> None:
    """Let every Python the session starts (hundreds of `invoke` runs) write and reuse its compiled modules:
    where PYTHONDONTWRITEBYTECODE is set, each would compile the project again (about 0.1 s a launch). They go
    to the __pycache__ folders beside the sources, which git ignores; a PYTHONPYCACHEPREFIX folder would keep
    the checkout free of them, but Python then reads compiled modules only there, and compiled every library
    module again in each session (2 s more for one `invoke docs` alone)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def remove_session_scratch(folder: Path | None, passed: bool) -> str | None:
    """Remove the folder after a passing session; after a failing one, say where it is."""
    if folder is None:
        return None
    if passed:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return f"the session's temporary files are kept in {folder}"
