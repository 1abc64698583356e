"""The user's cache folder for what the project can make again but should not have to: wheels for hosts,
drawn charts. Everything in it is named by a digest of what made it, so a stale entry is never read."""

from __future__ import annotations

import os
import time
from pathlib import Path

UNUSED_FOR_S = 30 * 24 * 3600  # an entry nobody read for 30 days is removed


def user_cache(*parts: str) -> Path:
    """A folder under the user's cache ($XDG_CACHE_HOME, else ~/.cache), made if missing."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = root.joinpath("benchsite", *parts)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def read_cached(path: Path) -> bytes | None:
    """The entry's content, marked as used (None if there is none)."""
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        return None
    os.utime(path)
    return content


def write_cached(path: Path, content: bytes) -> None:
    """Store an entry whole (a reader never sees half of one), then remove its folder's long-unused entries."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(content)
    os.replace(temporary, path)
    cutoff = time.time() - UNUSED_FOR_S
    for entry in path.parent.iterdir():
        try:
            if entry.is_file() and entry.stat().st_mtime < cutoff:
                entry.unlink()
        except FileNotFoundError:
            continue
