"""The README a newcomer reads: what this is, the two commands with a time each, where to read on."""

from __future__ import annotations

import re

from benchsite.sphinxext.setup_steps import setup_command
from conftest import REPO

README = REPO / "README.md"


def test_the_readme_is_at_most_800_words() -> None:
    assert len(README.read_text().split()) <= 800


def test_its_two_commands_set_up_and_run_then_test() -> None:
    blocks = re.findall(r"```sh\n(.+?)\n```", README.read_text(), re.DOTALL)
    assert len(blocks) == 2 and blocks[1] == ".venv/bin/invoke test"
    assert blocks[0].endswith(".venv/bin/invoke recipe cherrypy-speed && .venv/bin/invoke docs")
    assert setup_command(README).startswith("apt-get update && ")


def test_its_set_up_installs_the_uv_that_requirements_pin() -> None:
    """The first command installs uv before the requirements that pin it: the same version."""
    given = re.findall(r"pip install (uv==\S+)", setup_command(README))
    pinned = re.findall(r"^(uv==\S+)", (REPO / "requirements.txt").read_text(), re.M)
    assert len(given) == 1 and given == pinned


def test_every_page_it_points_to_exists() -> None:
    for page in re.findall(r"`(docs/[\w./-]+\.rst)`", README.read_text()):
        assert (REPO / page).is_file(), page
