"""The data tree as committed: the only data the tests read.

A user's own runs (a full run made by the README's first command, quick runs, sweeps) sit in data/
beside the committed ones; a test that read "the newest run under data/" would change its outcome
with them. So every test reads COMMITTED_DATA instead: a copy, made once per test session, of exactly
the files git tracks under data/.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

from conftest import REPO


def tracked_data_files(repo: Path) -> list[str]:
    """The paths under data/ that git tracks in `repo` (relative to data/)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "data"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    return sorted(name.removeprefix("data/") for name in listed.split("\0") if name)


def copy_committed_data(repo: Path, target: Path) -> Path:
    """Copy the files git tracks under repo/data/ into target (as they are in the working tree)."""
    for name in tracked_data_files(repo):
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / "data" / name, destination)
    return target


def _session_copy() -> Path:
    target = Path(tempfile.mkdtemp(prefix="bench-committed-data-"))
    atexit.register(shutil.rmtree, target, True)
    return copy_committed_data(REPO, target)


COMMITTED_DATA = _session_copy()
