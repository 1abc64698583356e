"""Stored runs carry no path of the machine that made them: paths become {placeholders}.

The runner knows each path it filled into a command ({python}, {recipe_dir}, the run's temporary
folder...) and stores the placeholder instead; runs stored before that are rewritten by `invoke
upgrade-data`, which infers the same paths from the document itself. Commands are shown to readers
with portable names (python, .venv/bin, the recipe folder as ".").
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path

# The temporary folder a run's servers work in (tempfile's names: letters, digits, underscores).
WORKROOT = re.compile(r"/tmp/benchsite-[A-Za-z0-9_]+")
# "CPython 3.11.7 (/path/to/.venv/bin/python3)": the interpreter path recorded by the first runs.
_RECORDED_PYTHON = re.compile(r'"python": "[^"(]*\((/[^)"]+)\)"')
_SITE_PACKAGES = re.compile(r"/\.venv/lib/python3\.\d+/site-packages")
# How each placeholder reads in a command shown on a page.
SHOWN = {
    "{python}": "python",
    "{bin}": ".venv/bin",
    "{recipe_dir}": ".",
    "{site_packages}": "$SITE_PACKAGES",
    "{workroot}": "$WORKROOT",
    "{repo}": "$REPO",
}


def placeholders_of(values: Mapping[str, str], workroot: Path | None) -> dict[str, str]:
    """{path: placeholder} for the paths a run filled into its commands (base_values and its temp folder)."""
    found = {
        values[name]: "{" + name + "}"
        for name in ("python", "bin", "recipe_dir", "site_packages")
        if name in values and values[name].startswith("/")
    }
    if workroot is not None:
        found[str(workroot)] = "{workroot}"
    return found


def inferred_placeholders(text: str) -> dict[str, str]:
    """{path: placeholder} inferred from a stored document: its interpreter's path gives the project's."""
    found: dict[str, str] = {}
    recorded = _RECORDED_PYTHON.search(text)
    if recorded and "/.venv/bin/" in recorded.group(1):
        python = recorded.group(1)
        repo = python.split("/.venv/bin/")[0]
        found[python] = "{python}"
        found[f"{repo}/.venv/bin"] = "{bin}"
        for site in {m.group(0) for m in _SITE_PACKAGES.finditer(text)}:
            found[repo + site] = "{site_packages}"
        for recipe in set(re.findall(re.escape(repo) + r"/recipes/[a-z0-9_-]+", text)):
            found[recipe] = "{recipe_dir}"
        found[repo] = "{repo}"
    for workroot in set(WORKROOT.findall(text)):
        found[workroot] = "{workroot}"
    return found


def make_portable(text: str, placeholders: Mapping[str, str]) -> str:
    """The text with every known path replaced by its placeholder, longest path first."""
    for path in sorted(placeholders, key=len, reverse=True):
        text = text.replace(path, placeholders[path])
    return text


def shown_command(argv: tuple[str, ...] | list[str]) -> str:
    """A stored command as a reader would type it: placeholders read as portable names, quoted as needed."""
    tokens = []
    for token in argv:
        for placeholder, shown in SHOWN.items():
            token = token.replace(placeholder, shown)
        plain = re.fullmatch(r"[\w@%+=:,./$-]+", token)
        tokens.append(token if plain else shlex.quote(token))
    return " ".join(tokens)
