"""Set-up commands run side by side (a sweep's environments): outputs in order, and none left running on a way out."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import psutil
import pytest

from benchsite.errors import BenchError
from benchsite.harness.processes.commands import run_helpers


def test_the_runs_come_back_in_the_commands_order_with_their_exit_codes() -> None:
    slow_first = [sys.executable, "-c", "import time; time.sleep(0.3); print('first')"]
    failing = [sys.executable, "-c", "import sys; sys.exit('broken')"]
    runs = run_helpers([slow_first, failing], timeout_s=30)
    assert [(run.argv, run.exit_code) for run in runs] == [(slow_first, 0), (failing, 1)]
    assert runs[0].stdout == "first\n" and runs[1].stderr == "broken\n"


def test_a_time_out_stops_every_command_still_running_and_its_children(tmp_path: Path) -> None:
    """Each command's child (pip's build backend, say) is found by its own mark: however far the commands got
    in their half second, none of theirs is left."""
    marks = [f"{seconds}.{os.getpid() % 1000:03d}" for seconds in (30, 31)]  # this session's own sleeps
    commands = [["sh", "-c", f"sleep {mark} & wait"] for mark in marks]
    with pytest.raises(BenchError, match=r"took over 0\.5 s and was stopped"):
        run_helpers(commands, timeout_s=0.5)
    left = [p.info["cmdline"] for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"]]
    assert [argv for argv in left if argv[:2] in [["sleep", m] for m in marks]] == []


def test_a_command_that_cannot_start_is_one_line_and_stops_the_others() -> None:
    """The sleep is found by its own mark, not by the session's children: the set-up made beside the unit tier
    (tests/ahead.py) starts and ends processes of its own meanwhile."""
    mark = f"32.{os.getpid() % 1000:03d}"
    with pytest.raises(BenchError, match="cannot run /nonexistent/pip"):
        run_helpers([["sleep", mark], ["/nonexistent/pip"]], timeout_s=30)
    left = [p.info["cmdline"] for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"]]
    assert ["sleep", mark] not in left
