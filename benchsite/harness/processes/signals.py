"""Signals in one place: Ctrl-C, SIGTERM, a closed terminal (SIGHUP) and Ctrl-\\ (SIGQUIT) all stop a run
the same way, by raising KeyboardInterrupt in the main thread so every `finally` and ExitStack runs.

Between spawning a server and registering it for clean-up the signals are held back (blocked, and
delivered as soon as the registration is done), so no interrupt can fall between the two; the child
unblocks them for itself before it executes its program. Every other thread the harness starts
(`start_thread`, the progress display) blocks them for good, so the kernel hands them to the main
thread alone.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class _State:
    received: int | None = None
    task_running: bool = False


_state = _State()


def _interrupt(signum: int, frame: object) -> None:
    _state.received = signum
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _before_the_task(signum: int, frame: object) -> None:
    if _state.task_running:
        _interrupt(signum, frame)
    os.write(2, f"interrupted ({signal.Signals(signum).name}) before the task began: nothing was started\n".encode())
    os._exit(130)


def handle_signals_from_the_start() -> None:
    """From the moment the tasks are imported, before any task runs: a handled signal ends the process with one
    line and exit 130 (nothing has started yet), or, once a task runs (`task_began`), stops it as an interrupt."""
    for signum in HANDLED:
        signal.signal(signum, _before_the_task)
    pause_for_test("signals-handled")  # from here on a signal gets its line and exit 130: the tests start here


def _quiet_about_a_recorded_interrupt(unraisable: sys.UnraisableHookArgs) -> None:
    """Where Python cannot raise (an at-fork callback, a finaliser), it prints an interrupt as "Exception
    ignored" with a traceback. A handled signal's interrupt is recorded, and the next checkpoint raises it."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and _state.received is not None:
        return
    sys.__unraisablehook__(unraisable)


def task_began() -> None:
    """A task's body runs from here: a handled signal now raises KeyboardInterrupt, so its clean-up runs."""
    _state.received = None
    _state.task_running = True
    sys.unraisablehook = _quiet_about_a_recorded_interrupt


def interrupted() -> bool:
    """Whether a handled signal arrived since the task began, even one that something swallowed or turned
    into another error (a signal during an import can break a validator, which then reports a bad file)."""
    return _state.received is not None


@contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """While the block runs, each handled signal raises KeyboardInterrupt (and is remembered, see checkpoint).
    One that arrived earlier and was swallowed (by a library's bare `except` during an import) stops it at once."""
    previous = {signum: signal.signal(signum, _interrupt) for signum in HANDLED}
    try:
        checkpoint()
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def ignore_signals() -> None:
    """Once a task has ended (its run kept or not, its message chosen), the handled signals are ignored: a
    late one must not turn a finished task into a core dump or a traceback while the interpreter exits."""
    for signum in HANDLED:
        signal.signal(signum, signal.SIG_IGN)


def forget_the_escaped_interrupt() -> None:
    """CPython remembers a KeyboardInterrupt that escaped an exec() of source text (dataclasses build their
    methods that way, so a signal during an import can do it) and then ends the process with SIGINT at exit,
    whatever exit code the task chose (-2 instead of 130). Once the task has handled the interrupt, that
    memory is cleared: every exec() of source text starts by clearing it."""
    exec("pass")


def checkpoint() -> None:
    """Raise KeyboardInterrupt again if a signal arrived and something swallowed the first one."""
    if _state.received is not None:
        raise KeyboardInterrupt(signal.Signals(_state.received).name)


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold the handled signals back during the block; one that arrived meanwhile is delivered at its end."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def start_thread(target: Callable[..., object], *args: object) -> threading.Thread:
    """Start a daemon thread that never takes the handled signals: a thread inherits the signal mask of
    the thread that made it, so they all go to the main thread, which alone can hold them back around a
    spawn (a signal taken by another thread would raise in the main thread even there)."""
    with signals_held():
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
    return thread


def unblock_in_child() -> None:
    """For a child between fork and exec: take the signals back (the blocked set survives exec)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)


TEST_SIGNAL = "BENCHSITE_TEST_SIGNAL"  # "POINT:SIGNAME": the tests' way to signal at an exact moment


_reached: dict[str, int] = {}


def signal_for_test(point: str) -> None:
    """Send this process a signal at a named point of the code, where the tests ask for one (no sleeps):
    "POINT:SIGNAME" the first time it is reached, "POINT#N:SIGNAME" the N-th time."""
    wanted, _, name = os.environ.get(TEST_SIGNAL, "").partition(":")
    _reached[point] = _reached.get(point, 0) + 1
    at, _, nth = wanted.partition("#")
    if at == point and _reached[point] == int(nth or 1):
        os.kill(os.getpid(), signal.Signals[name])


TEST_PAUSE = "BENCHSITE_TEST_PAUSE"  # "POINT:FILE" or "POINT#N:FILE": make FILE, wait (5 s at most) until it is gone

_paused_at: dict[str, int] = {}


def pause_for_test(point: str) -> None:
    """Wait at a named point of the code while a test acts from outside (a Ctrl-C typed into a terminal, a
    link taken down), where the tests ask for it ("POINT#N": the N-th time it is reached): the file says the
    process got there, its removal lets it go on."""
    wanted, _, file = os.environ.get(TEST_PAUSE, "").partition(":")
    _paused_at[point] = _paused_at.get(point, 0) + 1
    name, _, nth = wanted.partition("#")
    if name != point or not file or _paused_at[point] != int(nth or 1):
        return
    marker = Path(file)
    marker.write_text(str(os.getpid()))
    deadline = time.monotonic() + 5.0
    while marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
