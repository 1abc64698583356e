"""Set-up commands run side by side (a sweep's environments): outputs in order, and none left running on a way out."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
import pytest

from benchsite.errors import BenchError
from benchsite.harness.processes import run_helpers


def test_the_runs_come_back_in_the_commands_order_with_their_exit_codes() -> None:
    slow_first = [sys.executable, "-c", "import time; time.sleep(0.3); print('first')"]
    failing = [sys.executable, "-c", "import sys; sys.exit('broken')"]
    runs = run_helpers([slow_first, failing], timeout_s=30)
    assert [(run.argv, run.exit_code) for run in runs] == [(slow_first, 0), (failing, 1)]
    assert runs[0].stdout == "first\n" and runs[1].stderr == "broken\n"


def test_a_time_out_stops_every_command_still_running_and_its_children(tmp_path: Path) -> None:
    commands = [["sh", "-c", f"sleep 30 & echo $! > {tmp_path / name}; wait"] for name in ("one", "two")]
    with pytest.raises(BenchError, match=r"took over 0\.5 s and was stopped"):
        run_helpers(commands, timeout_s=0.5)
    for name in ("one", "two"):  # a command's own child (pip's build backend) goes with it
        assert not running(int((tmp_path / name).read_text()))


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_command_that_cannot_start_is_one_line_and_stops_the_others() -> None:
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(BenchError, match="cannot run /nonexistent/pip"):
        run_helpers([["sleep", "30"], ["/nonexistent/pip"]], timeout_s=30)
    assert {p.pid for p in psutil.Process().children(recursive=True)} == before
