"""Set-up that runs no benchmark, made in the background while the unit tier runs.

The unit tier (run first, see conftest) keeps one CPU busy and leaves the other idle. A test module registers
here the slow set-up its fixture needs that measures nothing: building the committed site, setting up the
two-host lab, making the sweep's release environments, asking every task for its help, running mypy. When
the session's tests are known, the jobs their fixtures need start, longest first, two at a time, on threads
of their own (one at a time left the first test beyond the unit tier waiting 6-10 s for the last of them:
they wait on pip, sshd and the disk as much as on a CPU). That first test waits until every job is done,
making the jobs not yet begun itself, so no benchmark ever shares the machine with them. A fixture takes
its job's result, or has it made on the spot when the job was not started (a session of one module, say);
a job's error is raised there.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Job:
    """What a fixture needs made: `make` returns it; `close` undoes it when no fixture took it."""

    fixture: str  # the fixture that takes the result: the job starts when a selected test uses it
    make: Callable[[], Any]
    seconds: float  # about how long it takes here: the longest start first, so the last ones end together
    close: Callable[[Any], None] | None = None


class Ahead:
    """The registered jobs, those started, and the threads that make them."""

    def __init__(self, threads: int = 2) -> None:
        self._threads = threads
        self._jobs: dict[str, Job] = {}
        self._started: dict[str, Future[Any]] = {}
        self._taken: set[str] = set()
        self._pool: ThreadPoolExecutor | None = None
        self.took_s: dict[str, float] = {}  # each job made, and how long it took (the session's summary says)
        self.waited_s = 0.0  # how long the tests beyond the unit tier waited for the jobs to end

    def add(self, name: str, job: Job) -> None:
        self._jobs[name] = job

    @property
    def fixtures(self) -> set[str]:
        """The fixtures that take a job's result."""
        return {job.fixture for job in self._jobs.values()}

    def start(self, fixtures_used: set[str]) -> list[str]:
        """Start, longest first, the jobs whose fixture a selected test uses; their names."""
        wanted = sorted(
            (name for name, job in self._jobs.items() if job.fixture in fixtures_used),
            key=lambda name: -self._jobs[name].seconds,
        )
        if wanted:
            spawn_with_a_copy_of_the_environment()
            self._pool = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="ahead")
            for name in wanted:
                self._started[name] = self._pool.submit(self._timed, name)
        return wanted

    def _timed(self, name: str) -> Any:
        started = time.monotonic()
        try:
            return self._jobs[name].make()
        finally:
            self.took_s[name] = time.monotonic() - started

    def finish(self) -> None:
        """Wait until no job runs: each one not yet begun is made here, beside those the threads make."""
        started = time.monotonic()
        running = any(not future.done() for future in self._started.values())
        for name, future in self._started.items():
            if future.cancel():
                self._started[name] = _made_here(lambda name=name: self._timed(name))
        for future in self._started.values():
            future.exception()  # waits; the error, if any, goes to the fixture that takes the result
        if running:
            self.waited_s += time.monotonic() - started

    def take(self, name: str) -> Any:
        """The job's result (made now if it was never started); its error is raised here."""
        self._taken.add(name)
        future = self._started.get(name)
        if future is None:
            return self._timed(name)
        if future.cancel():
            future = self._started[name] = _made_here(lambda: self._timed(name))
        return future.result()

    def dropped(self, name: str) -> bool:
        """Whether the job was started and then dropped before it began (`close` does that)."""
        return name in self._started and self._started[name].cancelled()

    def close(self) -> None:
        """At the session's end: drop what was never begun, wait for the rest, undo what nobody took."""
        dropped = {name for name, future in self._started.items() if future.cancel()}  # before a thread begins one
        for name, future in self._started.items():
            close = self._jobs[name].close
            if name in dropped or name in self._taken or close is None:
                continue
            if future.exception() is None:
                close(future.result())
        if self._pool is not None:
            self._pool.shutdown()


class _EnvironmentCopyingPopen(subprocess.Popen):
    """A Popen that hands its child a copy of the environment, made before it forks."""

    def __init__(self, *args: Any, env: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, env=_environment() if env is None else env, **kwargs)


def _environment() -> dict[str, str]:
    """A copy of the environment, taken again where another thread removed a variable while it was read (a copy
    lists the names, then reads each: a KeyError, once in a busy full run)."""
    while True:
        try:
            return os.environ.copy()
        except KeyError:
            continue


def spawn_with_a_copy_of_the_environment() -> None:
    """Let a job's thread start processes while a test changes the environment (the machine lock, monkeypatch).

    Python 3.11.6 and later let other threads run while a child started with vfork() calls exec(); a child that
    inherits the environment (env=None) reads the process's own array there, which another thread's setenv()
    may move at that moment: exec() then fails with "[Errno 14] Bad address" (seen in CI, on mypy's start).
    With a copy, the child reads an array its parent made and keeps until exec() is done.
    """
    subprocess.Popen = _EnvironmentCopyingPopen  # type: ignore[misc]


def _made_here(make: Callable[[], Any]) -> Future[Any]:
    future: Future[Any] = Future()
    try:
        future.set_result(make())
    except Exception as error:  # kept for the fixture that takes it, as the thread's would be
        future.set_exception(error)
    return future


AHEAD = Ahead()
