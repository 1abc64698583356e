"""`invoke sweep-envs`: make (or find) the environment of every release a sweep profile names."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from benchsite.harness.variants.copies import release_environments
from benchsite.model.recipe import load_recipe


def sweep_envs(name: str, profile: str, recipes: Path, conf: Path) -> None:
    """Each release's environment, with the dependencies of its time; one line per environment on stdout."""
    loaded = load_recipe(name, recipes, conf)
    started = time.monotonic()
    envs = release_environments(loaded, profile, say=lambda line: print(line, file=sys.stderr))
    for env in envs:
        patched = f", patched with {env.wanted.patch}" if env.wanted.patch else ""
        files = ", ".join(env.dist_files.values())
        print(f"{' '.join(env.wanted.requirements)}: build/sweep/{env.folder} ({files}{patched})")
    print(f"{len(envs)} environments ready in {time.monotonic() - started:.0f} s", file=sys.stderr)
