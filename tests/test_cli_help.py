"""Every task answers -h and --help with its help, no message carries an unfilled placeholder, and output piped
to a reader that left (`| head -1`) ends without a traceback."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys

import pytest

from ahead import AHEAD, Job
from benchsite.commands.invoking import quiet_when_the_reader_leaves
from benchsite.harness.builds.byo import local_path
from conftest import INVOKE, REPO, run_invoke
from tasks import ns

TASKS = sorted(name.replace("_", "-") for name in ns.task_names)
FLAGS = ("-h", "--help")


def ask_every_task_for_help() -> dict[tuple[str, str], subprocess.CompletedProcess]:
    """`invoke TASK -h` and `invoke TASK --help`, for every task, as a user types them."""
    return {(name, flag): run_invoke(name, flag, timeout=60) for name in TASKS for flag in FLAGS}


AHEAD.add("help texts", Job("help_texts", ask_every_task_for_help, seconds=6))


@pytest.fixture(scope="module")
def help_texts() -> dict[tuple[str, str], subprocess.CompletedProcess]:
    return AHEAD.take("help texts")


@pytest.mark.integration
@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize("name", TASKS)
def test_every_task_shows_its_help(
    name: str, flag: str, help_texts: dict[tuple[str, str], subprocess.CompletedProcess]
) -> None:
    result = help_texts[name, flag]
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith(f"Usage: inv[oke] [--core-opts] {name} ")
    docstring = ns[name].__doc__.split("\n")[0].split(":")[0]
    assert docstring.split()[0] in result.stdout


def test_no_short_flag_takes_h_from_help() -> None:
    for name in TASKS:
        flags = {flag for argument in copy.deepcopy(ns[name]).get_arguments() for flag in argument.names}
        assert "h" not in flags, name


def test_the_profile_help_names_every_profile_a_conf_defines() -> None:
    profiles = {
        match
        for path in (REPO / "conf").glob("*.toml")
        for match in re.findall(r"^\[profiles\.([\w-]+)\]", path.read_text(), re.MULTILINE)
    }
    arguments = copy.deepcopy(ns["recipe"]).get_arguments()  # a copy: invoke pops each help text as it reads it
    [profile] = [argument for argument in arguments if argument.name == "profile"]
    assert profiles and all(f"'{name}'" in profile.help for name in profiles), profile.help


def test_a_stored_path_is_shown_with_its_placeholders_filled_in() -> None:
    shown = local_path("{site_packages}/fapws/_evwsgi.so", REPO)
    assert "{" not in shown and shown.endswith("site-packages/fapws/_evwsgi.so")
    assert (
        local_path("{repo}/build/byo/cherokee/prefix/sbin/cherokee", REPO) == "build/byo/cherokee/prefix/sbin/cherokee"
    )


@pytest.mark.integration
@pytest.mark.parametrize("command", [("recipes",), ("recipe", "-h"), ("--list",)])
def test_output_to_a_reader_that_left_ends_without_a_traceback(command: tuple[str, ...]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader left before the first line (`| head -1` ends that soon)
    try:
        result = subprocess.run(
            [*INVOKE, *command], cwd=REPO, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60
        )
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (1, "")


def test_a_broken_pipe_other_than_standard_output_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    reported: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, error, trace: reported.append(kind))
    quiet_when_the_reader_leaves()
    sys.excepthook(BrokenPipeError, BrokenPipeError(32, "Broken pipe"), None)  # standard output is still read
    assert reported == [BrokenPipeError]
