"""Ctrl-C the way a user types it: into the real terminal (a pty) the run's progress display draws on, at the
instant a server has just been spawned, twice at each of four moments: every server stopped, exit 130, nothing
kept. (`invoke faults` is the place for hundreds of trials.)"""

from __future__ import annotations

import fcntl
import os
import pty
import subprocess
import termios
import threading
import time
from pathlib import Path

import pytest

from benchsite.harness.processes.signals import TEST_PAUSE
from conftest import INTERRUPTED_LINE, INVOKE, REPO, ToyRecipes, processes_mentioning, toy_subject

pytestmark = pytest.mark.integration

CTRL_C = b"\x03"


def _read_all(fd: int, into: bytearray) -> None:
    """Drain the terminal so that the progress display never blocks on a full pty."""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return
        if not chunk:
            return
        into.extend(chunk)


def _become_terminals_owner() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # after setsid: the pty is this session's controlling terminal


@pytest.mark.parametrize("attempt", range(8))
def test_ctrl_c_typed_at_a_spawn_stops_every_server(toy: ToyRecipes, tmp_path: Path, attempt: int) -> None:
    toy.add("toy", toy_subject() + toy_subject(name="second"))
    marker = tmp_path / "spawned"
    master, slave = pty.openpty()
    env = {
        **os.environ,
        **toy.env,
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        TEST_PAUSE: f"server-started:{marker}",
    }
    process = subprocess.Popen(
        [*INVOKE, "recipe", "toy", "--profile", "quick", "--data-dir", str(toy.data_dir)],
        cwd=REPO,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        preexec_fn=_become_terminals_owner,
    )
    os.close(slave)
    output = bytearray()
    reader = threading.Thread(target=_read_all, args=(master, output), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert marker.exists(), output.decode(errors="replace")[-2000:]
        os.write(master, CTRL_C)  # the terminal sends SIGINT to the whole foreground process group
        time.sleep(0.05 * (attempt % 4))  # cannot race: any moment of the held spawn must give the same end
        marker.unlink()
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
        reader.join(timeout=5)
    said = output.decode(errors="replace")
    assert code == 130, said[-2000:]
    assert INTERRUPTED_LINE.search(said), said[-2000:]
    assert "Traceback" not in said and "Exception ignored" not in said
    assert processes_mentioning(str(toy.root)) == []
    assert not (toy.data_dir / "toy").exists() or list((toy.data_dir / "toy").iterdir()) == []
