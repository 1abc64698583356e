"""The set-up a reader needs before any re-run command: where the code is and the README's own set-up command."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from docutils import nodes

from benchsite.errors import BenchError
from benchsite.sphinxext.base import ReportingDirective
from benchsite.sphinxext.tables import literal

# The README's first command sets up, then runs a recipe and builds the site; the set-up is what comes before.
RUN_PART = " && .venv/bin/invoke recipe "


def setup_command(readme: Path) -> str:
    """The set-up part of the README's first ```sh block (one home: the README)."""
    try:
        text = readme.read_text(encoding="utf-8")
    except OSError as error:
        raise BenchError(f"{readme}: cannot read it ({error.strerror}): the set-up steps come from there") from None
    block = re.search(r"```sh\n(.+?)\n```", text, re.DOTALL)
    if block is None or RUN_PART not in block.group(1):
        raise BenchError(f"{readme}: its first ```sh block must set up, then run `.venv/bin/invoke recipe NAME`")
    return block.group(1).split(RUN_PART, 1)[0].strip()


def repository_url(pyproject: Path) -> str | None:
    """The code's public address, from pyproject.toml's [project.urls] Repository, if it names one."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    url = data.get("project", {}).get("urls", {}).get("Repository")
    return url if isinstance(url, str) and url.startswith("https://") else None


class BenchSetup(ReportingDirective):
    """Where to get the code and how to set up a Debian 12 machine, before a page's re-run commands."""

    def render(self) -> list[nodes.Node]:
        root = Path(self.env.srcdir).parent
        readme, pyproject = root / "README.md", root / "pyproject.toml"
        self.env.note_dependency(str(readme))
        self.env.note_dependency(str(pyproject))
        command = setup_command(readme)
        url = repository_url(pyproject)
        intro = nodes.paragraph()
        if url:
            intro += nodes.Text("First, once: get the code (")
            intro += nodes.reference("", url, refuri=url)
            intro += nodes.Text(
                ") and set up a Debian 12 machine, as root, in the checkout (the README gives the time it takes):"
            )
            clone = f"$ git clone {url} benchsite && cd benchsite\n"
        else:
            intro += nodes.Text(
                "First, once: in a checkout of this site's repository (its public address is not recorded in this "
                "build's pyproject.toml), set up a Debian 12 machine, as root (the README gives the time it takes):"
            )
            clone = ""
        steps = " \\\n    && ".join(command.split(" && "))
        return [intro, literal(f"{clone}$ {steps}\n", language="console")]
