"""Stored runs carry no path or address of the machines that made them: both become {placeholders}.

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
# A user's home folder in a server's log ("Control socket listening at /root/.gunicorn/gunicorn.ctl").
HOME = re.compile(r"(?<![\w.}/-])(?:/root|/home/[\w.-]+)(?=/)")
# "CPython 3.11.7 (/path/to/.venv/bin/python3)": the interpreter path recorded by the first runs.
_RECORDED_PYTHON = re.compile(r'"python": "[^"(]*\((/[^)"]+)\)"')
_SITE_PACKAGES = re.compile(r"/\.venv/lib/python3\.\d+/site-packages")
# "server_hostname": "10.232.90.1": the server host's address as ab recorded it in a two-host run.
_RECORDED_HOST = re.compile(r'"server_hostname": "([^"]+)"')
# Addresses a run on one machine uses: kept, since they say nothing about the machine.
LOCAL_HOSTS = frozenset({"127.0.0.1", "::1", "localhost", "{host}"})
# How each placeholder reads in a command shown on a page.
SHOWN = {
    "{host}": "$SERVER_HOST",
    "{python}": "python",
    "{bin}": ".venv/bin",
    "{recipe_dir}": ".",
    "{site_packages}": "$SITE_PACKAGES",
    "{workroot}": "$WORKROOT",
    "{repo}": "$REPO",
    "{sweep}": "build/sweep",
    "{variants}": "build/variants",
    "{home}": "$HOME",
}


def placeholders_of(values: Mapping[str, str], workroot: Path | None) -> dict[str, str]:
    """{path: placeholder} for the paths a run filled into its commands (base_values and its temp folder)."""
    found = {
        values[name]: "{" + name + "}"
        for name in ("python", "bin", "recipe_dir", "site_packages", "sweep", "variants")
        if name in values and values[name].startswith("/")
    }
    if values.get("host", "127.0.0.1") not in LOCAL_HOSTS:
        found[values["host"]] = "{host}"  # another host's address: private, and no use to a reader
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
    for host in set(_RECORDED_HOST.findall(text)) - LOCAL_HOSTS:
        found[host] = "{host}"
    return found


def make_portable(text: str, placeholders: Mapping[str, str]) -> str:
    """The text with every known path or address replaced by its placeholder, longest first, then any
    user's home folder left by {home}."""
    for known in sorted(placeholders, key=len, reverse=True):
        if known.startswith("/"):
            text = text.replace(known, placeholders[known])
        else:  # an address: whole, so 10.0.0.1 leaves 10.0.0.12 alone
            text = re.sub(rf"(?<![\w.]){re.escape(known)}(?![\w])", placeholders[known], text)
    return HOME.sub("{home}", text)


def shown_command(argv: tuple[str, ...] | list[str]) -> str:
    """A stored command as a reader would type it: placeholders read as portable names, quoted as needed."""
    tokens = []
    for token in argv:
        for placeholder, shown in SHOWN.items():
            token = token.replace(placeholder, shown)
        plain = re.fullmatch(r"[\w@%+=:,./$-]+", token)
        tokens.append(token if plain else shlex.quote(token))
    return " ".join(tokens)
