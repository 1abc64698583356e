"""The project's files as a host needs them, and the digest that tells whether a host's copy is current."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

NOT_SYNCED = ("data/", "docs/", "tests/", ".github/", ".ci/")
SYNC_RECORD = ".benchsite-sync.json"  # written by `invoke hosts-setup` into a host's copy of the project


def project_files(repo: Path) -> list[str]:
    """The files a host needs: tracked or trackable by git, present, outside the folders it never reads."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout.decode()
    names = sorted({name for name in listed.split("\0") if name})
    return [name for name in names if not name.startswith(NOT_SYNCED) and (repo / name).is_file()]


def project_digest(repo: Path, files: list[str]) -> str:
    """A sha256 over the files' names and contents: equal digests, equal copies."""
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0" + (repo / name).read_bytes() + b"\0")
    return digest.hexdigest()


def sync_record(repo: Path) -> dict[str, Any] | None:
    """What `hosts-setup` wrote into this copy of the project (None where it is no synced copy)."""
    path = repo / SYNC_RECORD
    if (repo / ".git").exists() or not path.is_file():
        return None
    record: dict[str, Any] = json.loads(path.read_text())
    return record
