"""A fault-injection benchmark of the harness: signals at random moments of real recipe runs.

Each trial starts `invoke recipe NAME --profile quick` (or, one trial in four, an A/A run: `invoke versus
NAME -b checkout --subjects SUBJECT --profile quick`) into a scratch data folder, sends it SIGINT, SIGTERM,
SIGHUP or SIGQUIT after a random delay, waits for it to end, and counts what it left: processes it started
that still run, loopback ports still listening, staging folders, temporary folders, and the benchmark lock
still held (each trial takes a lock of its own, so that a SIGKILL while holding it is seen not to block the
next run). Every count must be zero. Only the run's own processes count (its session, or its environment
mark): a process someone else starts on the machine meanwhile is never a leftover.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psutil

from benchsite.harness.processes.live import live_processes
from benchsite.harness.processes.machine_lock import HOLDER_ENV, LOCK_ENV, holding_the_machine
from benchsite.harness.processes.signals import TEST_SIGNAL
from benchsite.results.store import STAGING_PREFIX

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
QUICK_RECIPES = ("cherrypy-speed", "wsgi-servers", "cherokee-vs-apache", "bottle-adapters")
A_A_SUBJECTS = {"cherrypy-speed": "raw-wsgi", "wsgi-servers": "cheroot"}  # an A/A trial: the subject both sides run


@dataclass(frozen=True)
class Trial:
    """One interrupted run and what it left behind."""

    recipe: str
    signal_name: str
    delay_s: float
    signalled: bool  # False: the run had ended before its signal was due, so none was sent
    exit_code: int
    processes: tuple[str, ...]  # started during the trial and still running after it
    ports: tuple[int, ...]  # loopback ports listening after it that were not before
    staging: int  # staging folders left in the scratch data folder
    workroots: int  # temporary folders left
    lock_held: bool = False  # the trial's benchmark lock still held after it ended (the next run would wait)

    @property
    def clean(self) -> bool:
        """Nothing of the run still runs or listens; and, unless it was SIGKILLed (which no process can handle:
        its folders are left for `invoke recipe --clean`), no folder of it is left."""
        folders_left = (self.staging or self.workroots) and self.signal_name != "SIGKILL"
        return not (self.processes or self.ports or folders_left or self.lock_held)


def listening_ports(owners: set[int] | None = None) -> set[int]:
    """TCP ports listening on this machine (or only those of the `owners` processes), as `ss -Hltnp` lists them:
    the kernel hands over the listening sockets alone, where psutil reads every socket of the machine (after a
    load test, tens of thousands waiting in TIME-WAIT: 0.7 s a call)."""
    shown = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True, timeout=30).stdout
    ports = set()
    for line in shown.splitlines():
        fields = line.split()  # State Recv-Q Send-Q Local-Address:Port Peer-Address:Port users:((...,pid=N,...))
        if len(fields) < 4:
            continue
        if owners is None or owners & {int(pid) for pid in _PID.findall(line)}:
            ports.add(int(fields[3].rsplit(":", 1)[1]))
    return ports


_PID = re.compile(r"pid=(\d+)")


def _workroots() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("benchsite-*"))


TRIAL_MARK = "BENCH_FAULT_TRIAL"  # in the environment of the trial's run, and so of every process it starts


def _of_trial(session: int, mark: str) -> list[psutil.Process]:
    """The live processes a trial's run started: those in its session (the run leads a new one), and any
    that left the session but inherited its environment mark. Nothing else on the machine counts."""
    found = []
    for process in live_processes():
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                continue
            if os.getsid(process.pid) == session or process.environ().get(TRIAL_MARK) == mark:
                found.append(process)
        except (psutil.Error, ProcessLookupError, PermissionError):
            continue  # gone meanwhile, or not ours to read: not the run's
    return found


STOPPING_S = 10.0  # how long a run's children may take to stop after it ended (Apache's mod_wsgi takes seconds)


def _stopping(session: int, mark: str) -> list[psutil.Process]:
    """The trial's processes still alive once they had STOPPING_S to stop: a SIGKILLed harness's children get
    the parent-death signal and stop on their own, but not at once."""
    deadline = time.monotonic() + STOPPING_S
    alive = _of_trial(session, mark)
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = _of_trial(session, mark)
    return alive


def trial(
    recipe: str, signum: int, delay_s: float, *, repo: Path, scratch: Path, at: str = "", versus: bool = False
) -> Trial:
    """One run of a recipe (`versus`: an A/A run of it), signalled after delay_s (or by itself at the point
    `at` of its code, such as "server-started#2": see signals.signal_for_test), and its leftovers counted a
    moment after it ended."""
    ports_before, roots_before = listening_ports(), _workroots()
    staged_before = set(scratch.glob(f"*/{STAGING_PREFIX}*"))  # an earlier SIGKILLed trial's are not this one's
    mark = uuid.uuid4().hex
    at_point = {TEST_SIGNAL: f"{at}:{signal.Signals(signum).name}"} if at else {}
    lock = scratch / "trial.lock"  # its own lock, taken by the run itself (not the one `invoke faults` holds)
    environment = {key: value for key, value in os.environ.items() if key != HOLDER_ENV}
    command = (
        ["versus", recipe, "-b", "checkout", "--aa", "--subjects", A_A_SUBJECTS[recipe]]
        if versus
        else ["recipe", recipe]
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "invoke", *command, "--profile", "quick", "--data-dir", str(scratch)],
        cwd=repo,
        env={**environment, TRIAL_MARK: mark, LOCK_ENV: str(lock), **at_point},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    if not at:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=delay_s)  # one that ends by itself before its signal is not waited for
    signalled = process.poll() is None
    if signalled and not at:
        process.send_signal(signum)
    try:
        code = process.wait(timeout=180)
    except subprocess.TimeoutExpired:
        process.kill()
        code = process.wait()
    alive = _stopping(process.pid, mark)
    return Trial(
        recipe=f"{recipe} (A/A)" if versus else recipe,
        signal_name=signal.Signals(signum).name,
        delay_s=round(delay_s, 2),
        signalled=signalled,
        exit_code=code,
        processes=tuple(f"{p.name()} ({p.pid})" for p in alive),
        ports=tuple(sorted(listening_ports({p.pid for p in alive}) - ports_before)),
        staging=len(set(scratch.glob(f"*/{STAGING_PREFIX}*")) - staged_before),
        workroots=len(_workroots() - roots_before),
        lock_held=lock.exists() and _held_by_another(lock),
    )


def _held_by_another(lock: Path) -> bool:
    """Whether some process still holds the lock file (taking it at once fails)."""
    with open(lock, "rb") as file:
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(file, fcntl.LOCK_UN)
        return False


@holding_the_machine
def inject(
    runs: int, seed: int, max_delay_s: float, repo: Path, signals: tuple[signal.Signals, ...] = SIGNALS
) -> list[Trial]:
    """`runs` trials with recipes, signals and delays drawn from a seeded generator."""
    chooser = random.Random(seed)
    trials = []
    with tempfile.TemporaryDirectory(prefix="fault-injection-") as scratch:
        for _ in range(runs):
            versus = chooser.random() < 0.25
            recipe, signum = chooser.choice(tuple(A_A_SUBJECTS) if versus else QUICK_RECIPES), chooser.choice(signals)
            delay_s = chooser.uniform(0.0, max_delay_s)
            trials.append(trial(recipe, signum, delay_s, repo=repo, scratch=Path(scratch), versus=versus))
    return trials
