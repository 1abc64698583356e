"""What the project's Python imports, asked of a fresh interpreter as a server would import it, and which
installed distributions provide a module.

A run asks about the same modules several times (is it there? where from? which release?). The answers
are kept while the installed distributions stay as they are: installing, upgrading or rebuilding one
(`pip install`, `invoke byo`) rewrites its .dist-info folder, and that forgets them all.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_WHERE_FROM = (
    "import importlib, sys; m = importlib.import_module({module!r}); "
    "sys.stdout.write(m.__file__ or next(iter(getattr(m, '__path__', [])), ''))"
)


@dataclass(frozen=True)
class Imported:
    """One module's answer: the file it loads from, or why `import` fails."""

    path: Path | None  # None when it fails, or when it has no file (a built-in module)
    error: str | None  # the import's last error line, without its exception name


def installed() -> tuple[tuple[str, int], ...]:
    """Every installed distribution's metadata folder on the import path, with its modification time."""
    found = []
    for entry in map(Path, sys.path):
        if entry.is_dir():
            for meta in entry.iterdir():
                if meta.suffix in (".dist-info", ".egg-info"):
                    found.append((str(meta), meta.stat().st_mtime_ns))
    return tuple(sorted(found))


def imported(module: str) -> Imported:
    """Whether and from where a fresh interpreter of the project imports the module."""
    return _imported(module, installed())


@functools.lru_cache(maxsize=256)
def _imported(module: str, distributions: tuple[tuple[str, int], ...]) -> Imported:
    code = _WHERE_FROM.format(module=module)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    if result.returncode == 0:
        return Imported(path=Path(result.stdout) if result.stdout else None, error=None)
    lines = result.stderr.strip().splitlines()
    last = re.sub(r"^[A-Z]\w*(?:Error|Exception): ", "", lines[-1]) if lines else f"exit code {result.returncode}"
    return Imported(path=None, error=last)


def providers(module: str) -> list[str]:
    """The installed distributions that provide a module's top-level package, with versions."""
    names = _packages(installed()).get(module.split(".")[0], [])
    return [f"{name} {importlib.metadata.version(name)}" for name in sorted(set(names))]


@functools.lru_cache(maxsize=1)
def _packages(distributions: tuple[tuple[str, int], ...]) -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()
