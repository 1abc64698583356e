"""A server that leaves what the harness started (it daemonizes: forks, calls setsid() and exits) is still found
by the mark in its environment, stopped, and refused in one line; the memory of a process that is gone is unknown,
never 0 and never a stranger's that got its PID."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from benchsite.harness.processes import cgroups
from benchsite.harness.processes.marks import MARK_ENV, marked, new_mark
from benchsite.harness.processes.memory import PeakSampler, tree_memory
from benchsite.harness.processes.processes import STOPPED, Launch, start_server, stop_process_groups, stop_servers
from benchsite.results.store import list_runs, load_run
from conftest import ToyRecipes, processes_mentioning, run_invoke, toy_subject


@pytest.mark.integration
def test_a_server_that_daemonizes_is_refused_in_one_line_and_stopped(toy: ToyRecipes) -> None:
    toy.add("toy", toy_subject("--daemonize"))
    result = run_invoke("recipe", "toy", "--profile", "quick", "--data-dir", str(toy.data_dir), env=toy.env)
    assert result.returncode == 1, result.stderr
    *_, line = result.stderr.strip().splitlines()
    assert line.startswith("error: no subject could run: ")
    assert "subject 'toy' daemonized: its process exited (code 0) while port" in line, line
    assert "run it in the foreground" in line and "Traceback" not in result.stderr
    assert processes_mentioning(str(toy.root)) == []  # the daemon too, at once: the command waited for it


def daemon(mark: str) -> int:
    """A process that leaves its group and session, as a daemon does, carrying `mark`; its PID."""
    script = (
        "import os, sys, time\nif os.fork(): os._exit(0)\nos.setsid()\nprint(os.getpid(), flush=True)\ntime.sleep(60)"
    )
    root = subprocess.Popen(
        [sys.executable, "-c", script],
        env={**os.environ, MARK_ENV: mark},
        stdout=subprocess.PIPE,
        text=True,
        process_group=0,
    )
    assert root.stdout is not None
    pid = int(root.stdout.readline())
    root.wait()
    return pid


def test_a_daemon_that_left_the_group_is_stopped_by_its_mark_and_counted() -> None:
    mark = new_mark()
    root = subprocess.Popen([sys.executable, "-c", "pass"], process_group=0)
    root.wait()
    escaped = psutil.Process(daemon(mark))
    assert os.getpgid(escaped.pid) != root.pid and [p.pid for p in marked(mark)] == [escaped.pid]
    before = (STOPPED.servers, STOPPED.processes)
    stop_process_groups([root], term_timeout_s=10, marks=[mark])
    assert not escaped.is_running() or escaped.status() == psutil.STATUS_ZOMBIE
    assert marked(mark) == [] and (STOPPED.servers, STOPPED.processes) == (before[0] + 1, before[1] + 1)


def test_a_process_that_is_not_marked_is_never_touched() -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stop_process_groups([], term_timeout_s=1, marks=[new_mark()])
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_the_memory_of_a_process_that_is_gone_is_unknown() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    held = psutil.Process(gone.pid)
    gone.wait()
    assert tree_memory(held) is None
    sampler = PeakSampler(gone.pid, cpu=None, every_s=None)
    assert sampler.start().stop() is None


def test_a_sampler_never_reads_the_process_that_took_its_pid() -> None:
    """The process the sampler holds is replaced, under the same PID, by another that started later (the test
    process itself stands in for it): the sampler reads nothing of it."""
    sampler = PeakSampler(os.getpid(), cpu=None, every_s=None)
    assert sampler.root is not None
    pid, created = sampler.root._ident
    sampler.root._ident = (pid, created - 1000)
    assert sampler.start().stop() is None and sampler.root is None


# A server whose process double-forks, leaves its session and execs with an empty environment (no mark left),
# then exits: what it left runs on, a grandchild of nothing the harness holds.
ESCAPE = """
import os, sys
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
code = "import time; print('escaped', flush=True); time.sleep(120)"
os.execve(sys.executable, [sys.executable, "-c", code, sys.argv[1]], {})
"""


def escaped_pid(server_log: Path, timeout_s: float = 30.0) -> psutil.Process:
    """The process that escaped, found by the line it writes to the server's log (an event, not a delay)."""
    deadline = time.monotonic() + timeout_s
    while "escaped" not in server_log.read_text():
        assert time.monotonic() < deadline, "the escaping process never started"
        time.sleep(0.01)
    (found,) = processes_mentioning(str(server_log))
    return found


@pytest.mark.parametrize("cgroup", [True, False], ids=["in a cgroup", "adopted (no cgroup)"])
def test_a_server_that_double_forks_with_an_empty_environment_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cgroup: bool
) -> None:
    if cgroup and cgroups.home() is None:
        pytest.skip("this machine lets the harness make no cgroup: the fallback is the other case")
    if not cgroup:
        monkeypatch.setattr(cgroups, "path_of", lambda mark: None)
        monkeypatch.setattr(cgroups, "make", lambda mark: None)
    log = tmp_path / "server.log"
    launch = Launch("escaper", [sys.executable, "-c", ESCAPE, str(log)], 0, None, log, tmp_path)
    server = start_server(launch)
    escaped = escaped_pid(log)
    assert MARK_ENV not in escaped.environ() and os.getsid(escaped.pid) != os.getsid(0)
    assert [p.pid for p in marked(server.mark)] == ([escaped.pid] if cgroup else [])
    stop_servers([server], term_timeout_s=10)
    assert not escaped.is_running() or escaped.status() == psutil.STATUS_ZOMBIE
    assert cgroups.path_of(server.mark) is None or not cgroups.path_of(server.mark).exists()  # type: ignore[union-attr]


@pytest.mark.integration
def test_a_server_that_daemonizes_after_it_answered_is_named_so_and_stopped(toy: ToyRecipes) -> None:
    # Three answers (readiness, verification, the keep-alive probe), then its process forks, leaves, and exits.
    toy.add("later", toy_subject("--one-thread", "--daemonize-after", "3"))
    result = run_invoke("recipe", "later", "--profile", "quick", "--data-dir", str(toy.data_dir), env=toy.env)
    assert "Traceback" not in result.stderr, result.stderr
    (run_dir,) = list_runs(toy.data_dir / "later")
    errors = [rep.error for _, cell in load_run(run_dir).every_cell() for rep in cell.repetitions]
    assert errors and all(error and "the server daemonized after it answered" in error for error in errors), errors
    assert processes_mentioning(str(toy.root)) == []  # what it left was stopped with the run
