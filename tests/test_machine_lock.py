"""One benchmark per machine: a second measuring command waits for the first (or, with --no-wait, stops),
and a holder killed outright never blocks the next."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchsite.harness.processes.machine_lock import HOLDER_ENV, LOCK_ENV
from benchsite.harness.processes.machine_lock import holder as holder_of
from benchsite.model.run import RUN_FILE
from conftest import INVOKE, REPO, ToyRecipes, toy_subject

WAIT_S = 120  # the longest any step may take on a slow machine; every wait ends at its event

# A process that takes the lock, says so, and holds it until its standard input closes.
HOLDER = """
import sys
from benchsite.harness.processes.machine_lock import measuring
with measuring(wait=False):
    print("held", flush=True)
    sys.stdin.read()
"""


def lock_env(lock: Path) -> dict[str, str]:
    """The environment of a process measuring under a lock of the test's own (not the session's)."""
    env = {key: value for key, value in os.environ.items() if key != HOLDER_ENV}
    return {**env, LOCK_ENV: str(lock)}


@contextmanager
def holder(lock: Path) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER],
        cwd=REPO,
        env=lock_env(lock),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "held"
        yield process
    finally:
        process.kill()
        process.wait()


class Lines:
    """A process's standard error, line by line as it comes, to wait on."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._new = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            with self._new:
                self.lines.append(line.rstrip("\n"))
                self._new.notify_all()

    def wait_for(self, text: str) -> str:
        with self._new:
            found = self._new.wait_for(lambda: any(text in line for line in self.lines), timeout=WAIT_S)
        assert found, f"no line with {text!r} in {WAIT_S} s: {self.lines}"
        return next(line for line in self.lines if text in line)

    def finish(self) -> str:
        self._thread.join(WAIT_S)
        return "\n".join(self.lines)


def start_run(toy: ToyRecipes, lock: Path, *extra: str) -> tuple[subprocess.Popen[str], Lines]:
    process = subprocess.Popen(
        [*INVOKE, "recipe", "toy", "--profile", "quick", "--data-dir", str(toy.data_dir), *extra],
        cwd=REPO,
        env={**lock_env(lock), **toy.env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return process, Lines(process)


def wait_until_holding(lock: Path, pid: int) -> None:
    """Until the lock file names `pid` as its holder (it writes itself down once it holds the lock)."""
    deadline = time.monotonic() + WAIT_S
    while holder_of(lock).get("pid") != pid:
        assert time.monotonic() < deadline, f"pid {pid} did not take the lock in {WAIT_S} s"
        time.sleep(0.05)


def test_a_second_run_waits_for_the_first_then_runs_and_no_wait_stops_at_once(toy: ToyRecipes, tmp_path: Path) -> None:
    toy.add("toy", toy_subject())
    lock = tmp_path / "machine.lock"
    first, first_said = start_run(toy, lock)
    wait_until_holding(lock, first.pid)
    os.kill(first.pid, signal.SIGSTOP)  # holding the lock, for as long as the test needs: no race with its end
    try:
        second, second_said = start_run(toy, lock)
        waiting = second_said.wait_for("waiting for another benchmark to finish")
        assert f"pid {first.pid} (" in waiting and "recipe toy" in waiting
        refused = subprocess.run(
            [*INVOKE, "recipe", "toy", "--profile", "quick", "--data-dir", str(toy.data_dir), "--no-wait"],
            cwd=REPO,
            env={**lock_env(lock), **toy.env},
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        assert f"another benchmark holds this machine: pid {first.pid}" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert first.wait(WAIT_S) == 0, first_said.finish()
    assert second.wait(WAIT_S) == 0, second_said.finish()
    runs = sorted((toy.data_dir / "toy").glob(f"*/{RUN_FILE}"))
    assert len(runs) == 2  # the refused one wrote nothing
    earlier, later = (json.loads(path.read_text()) for path in runs)
    assert earlier["finished_at"] <= later["started_at"]  # one after the other, never together


def try_to_hold(lock: Path) -> subprocess.CompletedProcess[str]:
    """Another process taking the lock at once (--no-wait), then letting it go."""
    return subprocess.run(
        [sys.executable, "-c", HOLDER],
        cwd=REPO,
        env=lock_env(lock),
        input="",
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )


def test_a_holder_killed_outright_never_blocks_the_next(tmp_path: Path) -> None:
    lock = tmp_path / "machine.lock"
    with holder(lock) as first:
        taken = try_to_hold(lock)
        assert taken.returncode == 1 and f"another benchmark holds this machine: pid {first.pid}" in taken.stderr
        first.send_signal(signal.SIGKILL)
        first.wait()
        again = try_to_hold(lock)
        assert again.returncode == 0 and again.stdout.strip() == "held", again.stderr


# A process that waits for the lock, saying so on standard error, then says it holds it.
WAITER = """
import sys
from benchsite.harness.processes.machine_lock import measuring
with measuring(wait=True, say=lambda line: print(line, file=sys.stderr, flush=True)):
    print("held", file=sys.stderr, flush=True)
"""


def test_a_waiter_names_each_new_holder_that_comes_before_it(tmp_path: Path) -> None:
    """flock keeps no queue: a waiter can be overtaken, and its line must not keep naming the first holder."""
    lock = tmp_path / "machine.lock"
    with holder(lock) as first:
        waiter = subprocess.Popen(
            [sys.executable, "-c", WAITER], cwd=REPO, env=lock_env(lock), stderr=subprocess.PIPE, text=True
        )
        said = Lines(waiter)
        assert f"pid {first.pid} (" in said.wait_for("waiting for another benchmark to finish")
        os.kill(waiter.pid, signal.SIGSTOP)  # the waiter sleeps through the hand-over: the next holder is first
        first.kill()
        first.wait()
        with holder(lock) as second:
            os.kill(waiter.pid, signal.SIGCONT)
            assert f"pid {second.pid} (" in said.wait_for("still waiting: the machine went to")
            assert waiter.poll() is None
        said.wait_for("held")
    assert waiter.wait(WAIT_S) == 0


def test_a_long_wait_says_again_whom_it_waits_for(tmp_path: Path) -> None:
    """A suite behind another benchmark printed nothing for minutes: every REMIND_S (here shortened) a waiter
    says how long it has waited and for whom."""
    lock = tmp_path / "machine.lock"
    reminding = WAITER.replace("import sys\n", "import sys\nfrom benchsite.harness.processes import machine_lock\n")
    reminding = reminding.replace("with measuring(", "machine_lock.REMIND_S = 0.5\nwith measuring(")
    with holder(lock) as first:
        waiter = subprocess.Popen(
            [sys.executable, "-c", reminding], cwd=REPO, env=lock_env(lock), stderr=subprocess.PIPE, text=True
        )
        said = Lines(waiter)
        said.wait_for("waiting for another benchmark to finish")
        reminder = said.wait_for("still waiting after")
        assert re.search(rf"still waiting after \d+ s for pid {first.pid} \(", reminder), reminder
    said.wait_for("held")
    assert waiter.wait(WAIT_S) == 0


@pytest.mark.integration
def test_the_unit_tier_passes_while_another_benchmark_holds_the_machine(tmp_path: Path) -> None:
    """The faults round's hang: `invoke test --fast` printed one file's name and waited 10 minutes behind a
    benchmark. The unit tier takes no lock (conftest refuses one that would), so it runs to its end."""
    lock = tmp_path / "machine.lock"
    with holder(lock) as other:
        result = subprocess.run(
            [*INVOKE, "test", "--fast", "--args", "-q -p no:cacheprovider"],
            cwd=REPO,
            env=lock_env(lock),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert other.poll() is None  # held throughout
    assert result.returncode == 0, result.stdout[-3000:]
    assert re.search(r"\d+ passed", result.stdout) and "waiting for another benchmark" not in result.stderr
