"""Faults at exact moments (a hook sends the signal, no sleeps): nothing keeps running, nothing half-written."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from benchsite.harness.experiments.faults import TRIAL_MARK, Trial, _of_trial, listening_ports, trial
from benchsite.harness.processes.signals import HANDLED, TEST_PAUSE, TEST_SIGNAL
from benchsite.results.store import STAGING_PREFIX, list_runs, load_run
from conftest import INTERRUPTED_LINE, INVOKE, REPO, ToyRecipes, processes_mentioning, run_invoke, toy_subject

pytestmark = pytest.mark.integration

SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]


def workroots() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("benchsite-*"))


@pytest.mark.parametrize("name", SIGNALS)
def test_a_signal_right_after_a_server_is_spawned_stops_it_and_keeps_nothing(toy: ToyRecipes, name: str) -> None:
    toy.add("toy", toy_subject() + toy_subject(name="second"))
    before = workroots()
    result = run_invoke(
        "recipe",
        "toy",
        "--profile",
        "quick",
        "--data-dir",
        str(toy.data_dir),
        env={**toy.env, TEST_SIGNAL: f"server-started:{name}"},
    )
    assert result.returncode == 130, result.stderr
    assert INTERRUPTED_LINE.search(result.stderr) and "interrupted: stopped the server" in result.stderr
    assert "Traceback" not in result.stderr
    assert processes_mentioning(str(toy.root)) == []
    assert not (toy.data_dir / "toy").exists() or list((toy.data_dir / "toy").iterdir()) == []
    assert workroots() <= before


@pytest.mark.parametrize(
    "when",
    ["run-kept:SIGINT", "after-wrote:SIGINT", "after-wrote:SIGQUIT", "after-wrote:SIGTERM", "after-wrote:SIGHUP"],
)
def test_an_interrupt_right_after_the_run_is_kept_says_it_was_kept(toy: ToyRecipes, when: str) -> None:
    toy.add("toy", toy_subject())
    result = run_invoke(
        "recipe",
        "toy",
        "--profile",
        "quick",
        "--data-dir",
        str(toy.data_dir),
        env={**toy.env, TEST_SIGNAL: when},
    )
    assert result.returncode == 130, result.stderr  # never a death by the signal, never 0 or 1
    [kept] = list_runs(toy.data_dir / "toy")
    assert result.stderr.strip().endswith(f"interrupted after the run was kept: {kept}")
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    assert processes_mentioning(str(toy.root)) == []


def test_what_a_killed_run_left_is_reported_then_cleaned(toy: ToyRecipes) -> None:
    toy.add("toy", toy_subject())
    before = workroots()
    killed = run_invoke(
        "recipe",
        "toy",
        "--profile",
        "quick",
        "--data-dir",
        str(toy.data_dir),
        env={**toy.env, TEST_SIGNAL: "server-started:SIGKILL"},
    )
    assert killed.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 10  # the server got the parent-death signal: it stops by itself
    while processes_mentioning(str(toy.root)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(toy.root)) == []
    [staging] = (toy.data_dir / "toy").glob(f"{STAGING_PREFIX}*")  # SIGKILL runs no clean-up: the folders stay
    [workroot] = workroots() - before
    reported = run_invoke("recipe", "toy", "--profile", "quick", "--data-dir", str(toy.data_dir), env=toy.env)
    assert reported.returncode == 0, reported.stderr
    assert (
        f"warning: a killed run left staging folder {staging}, temporary folder {workroot}: "
        "`.venv/bin/invoke recipe toy --clean` removes it"
    ) in reported.stderr
    cleaned = run_invoke("recipe", "toy", "--profile", "quick", "--clean", "--data-dir", str(toy.data_dir), env=toy.env)
    assert cleaned.returncode == 0, cleaned.stderr
    assert f"removed what a killed run left: staging folder {staging}" in cleaned.stderr
    assert not staging.exists() and not workroot.exists()
    assert len(list_runs(toy.data_dir / "toy")) == 2 and processes_mentioning(str(toy.root)) == []


def test_a_subject_that_fails_at_start_costs_only_its_own_row(toy: ToyRecipes) -> None:
    failing = toy_subject(name="broken").replace('"{port}"', '"{port}", "--status", "500"')
    toy.add("isolated", toy_subject() + failing)
    result = run_invoke("recipe", "isolated", "--profile", "quick", "--data-dir", str(toy.data_dir), env=toy.env)
    assert result.returncode == 1, result.stderr  # a broken subject fails the run, which is kept
    [run_dir] = list_runs(toy.data_dir / "isolated")
    run = load_run(run_dir)
    assert "broken" in {subject.name for subject in (*run.subjects, *run.skipped)}
    assert "answered GET / with status 500 (expected 200)" in (run_dir / "run.json").read_text()
    assert processes_mentioning(str(toy.root)) == []


def ab_running(pid: int) -> bool:
    try:
        return any(child.name() == "ab" for child in psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return False


def test_ctrl_c_while_measuring_stops_every_server(toy: ToyRecipes) -> None:
    toy.add("toy", toy_subject(), conf="[profiles.long]\nrequests = 200000\nrounds = 1\n")
    process = subprocess.Popen(
        [*INVOKE, "recipe", "toy", "--profile", "long", "--data-dir", str(toy.data_dir)],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **toy.env},
    )
    deadline = time.monotonic() + 60
    while not ab_running(process.pid):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert processes_mentioning(str(toy.root)) == [] and list_runs(toy.data_dir / "toy") == []


@contextmanager
def another_program_spawning(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Someone else on the machine: a shell of its own session starting short-lived `sleep`s in a loop."""
    script = "for i in $(seq 400); do sleep 0.3 & sleep 0.05; done; wait"
    other = subprocess.Popen(["bash", "-c", script], start_new_session=True, cwd=tmp_path)
    try:
        yield other
    finally:
        os.killpg(other.pid, signal.SIGKILL)
        other.wait()


def test_the_fault_benchmark_counts_only_the_runs_own_processes(tmp_path: Path) -> None:
    with another_program_spawning(tmp_path) as other:
        ended = trial(
            "no-such-recipe", signal.SIGINT, 5.0, repo=REPO, scratch=tmp_path
        )  # it fails at once, long before 5 s
        assert other.poll() is None  # the other program was starting processes all along
        assert not ended.signalled and ended.exit_code == 1 and ended.clean
        interrupted = trial("cherrypy-speed", signal.SIGTERM, 1.5, repo=REPO, scratch=tmp_path / "data")
        assert other.poll() is None
    assert interrupted.clean, interrupted  # interrupted, or ended before its signal: nothing of it is left


def test_a_listening_port_is_found_with_its_owner_while_it_listens() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        ours, others = listening_ports({os.getpid()}), listening_ports({os.getppid()})
        assert port in listening_ports() and port in ours and port not in others
    assert port not in listening_ports()


def test_a_process_the_run_started_counts_even_after_it_left_the_runs_session(tmp_path: Path) -> None:
    mark = "test-mark"
    escaped = subprocess.Popen(["sleep", "30"], start_new_session=True, env={**os.environ, TRIAL_MARK: mark})
    try:
        assert escaped.pid in {p.pid for p in _of_trial(os.getsid(0), mark)}
        assert escaped.pid not in {p.pid for p in _of_trial(os.getsid(0), "another-mark")}
    finally:
        escaped.kill()
        escaped.wait()


@pytest.mark.parametrize("point", ["server-started", "tool-started"])
def test_a_sigkilled_harness_takes_its_servers_with_it(toy: ToyRecipes, point: str) -> None:
    toy.add("toy", toy_subject() + toy_subject(name="second"))
    result = run_invoke(
        "recipe",
        "toy",
        "--profile",
        "quick",
        "--data-dir",
        str(toy.data_dir),
        env={**toy.env, TEST_SIGNAL: f"{point}:SIGKILL"},
    )
    assert result.returncode == -signal.SIGKILL  # no handler, no clean-up: the kernel's parent-death signal
    deadline = time.monotonic() + 10
    while processes_mentioning(str(toy.root)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(toy.root)) == []


def leftovers_after(recipe: str, signum: int, at: str, scratch: Path, versus: bool = False) -> tuple[Trial, list[str]]:
    """A real quick run (`versus`: an A/A run) signalled at a point of its own code; what of it still runs once
    its children had up to 15 s to stop (Apache's mod_wsgi takes a while), and the trial as counted."""
    found = trial(recipe, signum, 0.0, repo=REPO, scratch=scratch, at=at, versus=versus)
    deadline = time.monotonic() + 15
    left = list(found.processes)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [name for name in left if psutil.pid_exists(int(name.rsplit("(", 1)[1].rstrip(")")))]
    return found, left


def still_listening(ports: tuple[int, ...]) -> set[int]:
    """Which of these ports something on the machine still listens on."""
    return set(ports) & listening_ports()


# (recipe, the spawn the harness is killed at): cherrypy-speed's and wsgi-servers' first server, a load tool,
# cherokee-vs-apache's SCGI backend (spawned first) and its Apache server (the third spawn, after both backends).
SPAWNS = [
    ("cherrypy-speed", "server-started"),
    ("cherrypy-speed", "tool-started"),
    ("wsgi-servers", "server-started"),
    ("cherokee-vs-apache", "server-started"),
    ("cherokee-vs-apache", "server-started#3"),
    ("cherokee-vs-apache", "tool-started"),
]


@pytest.mark.parametrize(("recipe", "at"), SPAWNS)
def test_sigkill_at_each_kind_of_spawn_leaves_no_process_and_no_port(recipe: str, at: str, tmp_path: Path) -> None:
    found, left = leftovers_after(recipe, signal.SIGKILL, at, tmp_path)
    assert found.exit_code == -signal.SIGKILL, found  # killed at that spawn: no handler, no clean-up of its own
    assert left == [], found  # its children died with it (the parent-death signal)...
    assert still_listening(found.ports) == set(), found  # ...and the ports they had bound are free again


def test_an_ab_run_sigkilled_while_it_holds_the_lock_leaves_nothing_and_blocks_no_next_run(tmp_path: Path) -> None:
    found, left = leftovers_after("cherrypy-speed", signal.SIGKILL, "server-started#2", tmp_path, versus=True)
    assert found.recipe == "cherrypy-speed (A/A)" and found.exit_code == -signal.SIGKILL, found
    assert left == [] and still_listening(found.ports) == set(), found
    assert (tmp_path / "trial.lock").exists() and not found.lock_held  # the kernel let go of it with its holder


def start_quick_run(data_dir: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`invoke recipe cherrypy-speed --profile quick` in a session of its own, its standard error captured."""
    return subprocess.Popen(
        [*INVOKE, "recipe", "cherrypy-speed", "--profile", "quick", "--data-dir", str(data_dir)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, **(env or {})},
        preexec_fn=default_signal_actions,
    )


def default_signal_actions() -> None:
    """In the child before it executes: each handled signal takes its default action, as in a user's terminal,
    even when the tests run under `nohup` (which ignores SIGHUP, and children inherit that)."""
    for signum in HANDLED:
        signal.signal(signum, signal.SIG_DFL)


# Where the first second's signals are sent from: the handlers just installed (the rest of the tasks still to
# import), and the task's body about to run (nothing spawned yet). The process says it got there (TEST_PAUSE's
# file), so how fast this machine imports Python decides nothing.
FIRST_POINTS = ["signals-handled", "task-began"]


@pytest.mark.parametrize("name", ["SIGHUP", "SIGQUIT", "SIGTERM"])
def test_a_signal_once_the_handlers_are_in_place_exits_130_with_one_line_and_leaves_nothing(
    name: str, tmp_path: Path
) -> None:
    for at in FIRST_POINTS:
        for while_paused in (True, False):
            marker = tmp_path / "paused"
            process = start_quick_run(tmp_path / "data", env={TEST_PAUSE: f"{at}:{marker}"})
            deadline = time.monotonic() + 120
            while not marker.exists():
                assert process.poll() is None and time.monotonic() < deadline, f"never reached {at}"
                time.sleep(0.01)
            if while_paused:  # at the point itself
                process.send_signal(signal.Signals[name])
                marker.unlink()
            else:  # in the code right after it
                marker.unlink()
                process.send_signal(signal.Signals[name])
            _, stderr = process.communicate(timeout=60)
            assert process.returncode == 130, (at, while_paused, stderr)
            assert stderr.strip().splitlines()[-1].startswith("interrupted") and "Traceback" not in stderr
            assert processes_mentioning(str(tmp_path)) == []
    assert list_runs(tmp_path / "data" / "cherrypy-speed") == []


@pytest.mark.parametrize("name", ["SIGINT", "SIGHUP", "SIGQUIT", "SIGTERM"])
def test_a_signal_before_the_handlers_are_in_place_starts_nothing_and_leaves_nothing(name: str, tmp_path: Path) -> None:
    """While the interpreter still starts, a signal takes its default action (or, once the handlers are in
    place, its line): either way nothing was spawned, written or left."""
    before = workroots()
    process = start_quick_run(tmp_path)
    process.send_signal(signal.Signals[name])  # at once: Python has not even read tasks.py yet, most times
    _, stderr = process.communicate(timeout=60)
    assert process.returncode in (130, -signal.Signals[name], 1), stderr  # 1: SIGINT's KeyboardInterrupt
    if process.returncode == 130:
        assert stderr.strip().splitlines()[-1].startswith("interrupted"), stderr
    assert processes_mentioning(str(tmp_path)) == []
    assert not (tmp_path / "cherrypy-speed").exists() and workroots() <= before


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_signal_while_a_server_stops_lets_it_finish_stopping_first(toy: ToyRecipes, name: str) -> None:
    """A signal at the end of a run, as the harness stops its servers (a user's Ctrl-C just then)."""
    toy.add("toy", toy_subject("--slow-term", "0.5"))  # it exits half a second after its SIGTERM
    result = run_invoke(
        "recipe",
        "toy",
        "--profile",
        "quick",
        "--data-dir",
        str(toy.data_dir),
        env={**toy.env, TEST_SIGNAL: f"server-stopping:{name}"},
    )
    assert result.returncode == 130, result.stderr
    assert INTERRUPTED_LINE.fullmatch(result.stderr.strip().splitlines()[-1]), result.stderr
    assert processes_mentioning(str(toy.root)) == []  # at once: it said so, and it waited for that to be true


def test_a_server_that_loses_its_first_term_is_stopped_by_the_next_not_killed(toy: ToyRecipes) -> None:
    toy.add("toy", toy_subject("--lose-first-term"))
    result = run_invoke("recipe", "toy", "--profile", "quick", "--data-dir", str(toy.data_dir), env=toy.env)
    assert result.returncode == 0, result.stderr
    [run_dir] = list_runs(toy.data_dir / "toy")
    assert "exiting on the second SIGTERM" in (run_dir / "logs" / "toy.log").read_text()  # not SIGKILLed at 15 s
    assert processes_mentioning(str(toy.root)) == []


def test_a_runs_servers_are_stopped_side_by_side(toy: ToyRecipes) -> None:
    toy.add("toy", toy_subject("--slow-term", "1", name="first") + toy_subject("--slow-term", "1", name="second"))
    result = run_invoke("recipe", "toy", "--profile", "quick", "--data-dir", str(toy.data_dir), env=toy.env)
    assert result.returncode == 0, result.stderr
    [run_dir] = list_runs(toy.data_dir / "toy")
    moments = {}
    for name in ("first", "second"):
        log = (run_dir / "logs" / f"{name}.log").read_text()
        moments[name] = [float(m) for m in re.findall(r"^(?:took SIGTERM|exiting) at ([\d.]+)$", log, re.MULTILINE)]
    assert max(m[0] for m in moments.values()) < min(m[1] for m in moments.values()), moments  # both TERMed first
    assert processes_mentioning(str(toy.root)) == []


def test_a_server_stuck_in_its_shutdown_is_killed_by_the_guardian_when_the_harness_is_sigkilled(
    toy: ToyRecipes,
) -> None:
    toy.add("toy", toy_subject("--hang-on-term"))  # takes the parent-death SIGTERM, then never exits
    result = run_invoke(
        "recipe",
        "toy",
        "--profile",
        "quick",
        "--data-dir",
        str(toy.data_dir),
        env={**toy.env, TEST_SIGNAL: "tool-started:SIGKILL", "BENCHSITE_GUARDIAN_GRACE_S": "1"},
    )
    assert result.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 15  # the guardian's grace (1 s here), then SIGKILL
    while processes_mentioning(str(toy.root)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_mentioning(str(toy.root)) == []


@pytest.mark.integration
def test_what_a_killed_versus_run_left_is_found_and_cleaned_by_the_next_versus_run(tmp_path: Path) -> None:
    """`invoke versus` goes through the session of `invoke recipe`: a SIGKILLed A/B run's folders are named by
    the next one and removed by --clean."""
    side = ["versus", "cherrypy-speed", "-b", "rev:HEAD", "--aa", "--subjects", "raw-wsgi", "--profile", "quick"]
    where = ["--data-dir", str(tmp_path)]
    killed = run_invoke(*side, *where, env={TEST_SIGNAL: "server-started:SIGKILL"})
    assert killed.returncode == -signal.SIGKILL
    [staging] = (tmp_path / "cherrypy-speed").glob(f"{STAGING_PREFIX}*")  # SIGKILL runs no clean-up
    cleaned = run_invoke(*side, "--clean", *where)
    assert cleaned.returncode == 0, cleaned.stderr[-2000:]
    assert f"removed what a killed run left: staging folder {staging}" in cleaned.stderr
    assert not staging.exists() and len(list_runs(tmp_path / "cherrypy-speed")) == 1
