"""The session's scratch folder: a new session removes only the folders of sessions that have ended, never those of
one still running beside it (a second `invoke test` once removed a running suite's site build)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest
import scratch


def made(parent: Path, name: str, owner: dict[str, object] | None) -> Path:
    folder = parent / f"{scratch.PREFIX}{name}"
    folder.mkdir()
    if owner is not None:
        (folder / scratch.OWNER).write_text(json.dumps(owner), encoding="utf-8")
    return folder


def test_a_new_session_leaves_a_running_sessions_folder_and_prunes_ended_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = {"pid": int(ended.stdout), "started": 0.0}
    me = psutil.Process()
    running = made(tmp_path, "running", {"pid": me.pid, "started": me.create_time()})
    old = [made(tmp_path, f"ended-{n}", dead) for n in range(3)] + [made(tmp_path, "unowned", None)]
    monkeypatch.setattr(scratch, "IN_MEMORY", tmp_path)
    monkeypatch.delenv("TMPDIR")
    monkeypatch.setattr(tempfile, "tempdir", tempfile.tempdir)
    new = scratch.make_session_scratch()
    assert new is not None and new.parent == tmp_path and running.is_dir()
    assert json.loads((new / scratch.OWNER).read_text())["pid"] == me.pid
    assert sum(folder.is_dir() for folder in old) == scratch.KEPT - 1  # the newest ended ones, as before
