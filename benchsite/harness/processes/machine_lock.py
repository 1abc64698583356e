"""One benchmark per machine: every command that measures holds this machine-wide lock while it does.

A second one waits, saying which process it waits for, or with --no-wait stops at once. The lock is the
kernel's (`flock` on a file under /run/lock), so it goes with its holder however the holder ends, SIGKILL
included: nothing stale can block the next run. A command that starts others that measure (`invoke faults`
starts runs, the test suite runs benchmarks) lets them run under its own lock: they find their ancestor's
pid in BENCHSITE_LOCK_HOLDER and the lock file. One process may take the lock again while it holds it
(powerbench's runs go through the recipe session, which takes it too).
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import ParamSpec, TypeVar

import psutil

from benchsite.errors import BenchError

LOCK_ENV = "BENCHSITE_LOCK"  # another lock file than the machine's (a test's own)
HOLDER_ENV = "BENCHSITE_LOCK_HOLDER"  # the pid whose lock the processes it starts measure under
# Set by the test suite's unit tier (to the test's id), which never waits for the machine: a process it starts that
# would take the machine's lock (not a test's own, LOCK_ENV) fails at once, naming the test.
FORBIDDEN_ENV = "BENCHSITE_LOCK_FORBIDDEN"
P = ParamSpec("P")
T = TypeVar("T")
_held = 0  # how many times this process holds the lock (0: not)
POLL_S = 0.2  # how often a waiter tries the lock again and reads who holds it
REMIND_S = 30.0  # how often a waiter says again whom it still waits for


def lock_path() -> Path:
    """The machine's lock file: under /run/lock where the machine has it, else the temporary folder."""
    if os.environ.get(LOCK_ENV):
        return Path(os.environ[LOCK_ENV])
    run_lock = Path("/run/lock")
    folder = run_lock if run_lock.is_dir() and os.access(run_lock, os.W_OK) else Path(tempfile.gettempdir())
    return folder / "benchsite-measuring.lock"


def holder(path: Path | None = None) -> dict[str, object]:
    """Who last took the lock, as it wrote itself down (pid, command, since); {} where nobody said."""
    try:
        found = json.loads((path or lock_path()).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _described(found: dict[str, object]) -> str:
    if not found:
        return "a process that did not say which"
    return f"pid {found.get('pid')} ({found.get('command')}, since {found.get('since')})"


def _inherited(path: Path) -> bool:
    """Whether an ancestor of this process holds the lock and lets its children measure under it."""
    given = os.environ.get(HOLDER_ENV, "")
    if not given.isdigit() or holder(path).get("pid") != int(given):
        return False
    return int(given) in {parent.pid for parent in psutil.Process().parents()}


def _command() -> str:
    program = Path(sys.argv[0]).name if sys.argv else "python"
    return shlex.join([program, *sys.argv[1:]])[:160]


def _opened(path: Path) -> tuple[int, bool]:
    """The lock file, open for writing who holds it, or for reading alone where another user made it."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:
        pass
    except OSError as error:
        raise BenchError(
            f"cannot open the benchmark lock {path} ({error.strerror}): set {LOCK_ENV} to a file"
        ) from None
    else:
        try:
            os.fchmod(descriptor, 0o666)  # every user of the machine takes the same lock
        except OSError:
            pass
        return descriptor, True
    try:
        return os.open(path, os.O_RDONLY), False
    except OSError as error:
        raise BenchError(
            f"cannot open the benchmark lock {path} ({error.strerror}): set {LOCK_ENV} to a file"
        ) from None


@contextmanager
def measuring(wait: bool = True, say: Callable[[str], None] = print) -> Iterator[None]:
    """Hold the machine's lock meanwhile: wait for another holder (saying for whom) or, with wait=False,
    a one-line error at once."""
    global _held
    path = lock_path()
    if os.environ.get(FORBIDDEN_ENV) and not os.environ.get(LOCK_ENV):
        raise BenchError(
            f"{os.environ[FORBIDDEN_ENV]} takes the machine's lock in the unit tier, which never waits for the "
            "machine: give the test a tier's marker (integration)"
        )
    if _held or _inherited(path):
        _held += 1
        try:
            yield
        finally:
            _held -= 1
        return
    descriptor, writable = _opened(path)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            found = holder(path)
            other = _described(found)
            if not wait:
                raise BenchError(
                    f"another benchmark holds this machine: {other}; run when it is done, or without --no-wait "
                    "to wait for it"
                ) from None
            say(f"waiting for another benchmark to finish: {other} (one benchmark at a time on a machine)")
            _wait_for(descriptor, path, found, say)  # the holder just named: a later one is named anew
        if writable:
            since = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, json.dumps({"pid": os.getpid(), "command": _command(), "since": since}).encode(), 0)
        os.environ[HOLDER_ENV] = str(os.getpid())
        _held = 1
        try:
            yield
        finally:
            _held = 0
            os.environ.pop(HOLDER_ENV, None)
    finally:
        os.close(descriptor)  # the kernel lets go of the lock with the last descriptor


def _wait_for(descriptor: int, path: Path, first: dict[str, object], say: Callable[[str], None]) -> None:
    """Take the lock once its holders are done, naming each new holder that comes before this process: the
    kernel's flock keeps no queue, so another waiter may take it first."""
    named = first
    began = reminded = time.monotonic()
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            now = holder(path)  # {} while a new holder is writing itself down: said at the next look
            if now and now != named:
                say(f"still waiting: the machine went to {_described(now)} (one benchmark at a time on a machine)")
                named, reminded = now, time.monotonic()
            elif time.monotonic() - reminded >= REMIND_S:
                waited = time.monotonic() - began
                say(f"still waiting after {waited:.0f} s for {_described(named)} (one benchmark at a time)")
                reminded = time.monotonic()
            time.sleep(POLL_S)


def holding_the_machine(function: Callable[P, T]) -> Callable[P, T]:
    """`function` run under the machine's lock, waiting for another holder (an experiment's whole run)."""

    @functools.wraps(function)
    def held(*args: P.args, **kwargs: P.kwargs) -> T:
        with measuring():
            return function(*args, **kwargs)

    return held
