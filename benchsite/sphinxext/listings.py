"""Incremental builds: a page is re-read when a folder it lists changes (a new run of its recipe).

Sphinx tracks files, not folders: a page notes every file it reads with `note_dependency`, and
the folders it lists (the runs of a recipe, the recipes with published figures) with `note_listing`.
Before each build, `outdated` compares each noted listing with the folder today and names the
pages whose folders changed; nothing else is re-read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

ATTRIBUTE = "bench_listings"  # env attribute: {docname: {folder: (entries,)}}


def listing(folder: Path, pattern: str) -> tuple[str, ...]:
    """The names a folder holds matching a glob pattern, sorted (hidden staging folders left out)."""
    if not folder.is_dir():
        return ()
    return tuple(sorted(str(p.relative_to(folder)) for p in folder.glob(pattern) if not p.name.startswith(".")))


def note_listing(env: BuildEnvironment, folder: Path, pattern: str) -> None:
    """Re-read the current page when the entries of folder matching pattern change."""
    listings: dict[str, dict[tuple[str, str], tuple[str, ...]]] = getattr(env, ATTRIBUTE, {})
    listings.setdefault(env.docname, {})[(str(folder), pattern)] = listing(folder, pattern)
    setattr(env, ATTRIBUTE, listings)


def outdated(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """The pages whose noted folders list other entries than when they were read."""
    listings: dict[str, dict[tuple[str, str], tuple[str, ...]]] = getattr(env, ATTRIBUTE, {})
    return [
        docname
        for docname, folders in listings.items()
        if docname not in removed
        and any(listing(Path(folder), pattern) != entries for (folder, pattern), entries in folders.items())
    ]


def purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    getattr(env, ATTRIBUTE, {}).pop(docname, None)


def merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: Any) -> None:
    """Parallel reads: take the listings the other process noted for its pages."""
    mine = getattr(env, ATTRIBUTE, {})
    for docname in docnames:
        if docname in getattr(other, ATTRIBUTE, {}):
            mine[docname] = getattr(other, ATTRIBUTE)[docname]
    setattr(env, ATTRIBUTE, mine)


def setup_listings(app: Sphinx) -> None:
    app.connect("env-get-outdated", outdated)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
