"""The glue between invoke and the commands: tasks whose short flags leave -h to help, the one way a task ends
(a one-line error, exit 1; an interrupt, exit 130), and `invoke TASK -h` reaching the task's help."""

from __future__ import annotations

import functools
import os
import select
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from invoke import Collection, Exit, Task
from invoke import task as invoke_task

from benchsite.errors import BenchError, InterruptedAfterKeeping
from benchsite.harness.processes.signals import (
    forget_the_escaped_interrupt,
    ignore_signals,
    interrupted,
    pause_for_test,
    task_began,
)

F = TypeVar("F", bound=Callable[..., Any])


def interrupted_said() -> str:
    """The line an interrupted task ends with: what it stopped, counted."""
    from benchsite.harness.processes.processes import STOPPED

    return f"interrupted: {STOPPED.said()}; an unfinished run is not kept"


# `invoke hosts-setup`'s: each remote step runs in a pseudo-terminal, so it stops on the host too, and every step
# is safe to run again (the sync compares, the install stamp is written last; see harness/provision.py).
INTERRUPTED_SET_UP = (
    "interrupted: the set-up stopped where it was, on the host too (no server was started); run `invoke hosts-setup` "
    "again to finish it"
)


class BenchTask(Task):
    """A task whose short flags leave -h to invoke's help (`--hosts` is -o, not -h)."""

    def arg_opts(self, name: str, default: str, taken_names: set[str]) -> dict[str, Any]:
        return super().arg_opts(name, default, taken_names | {"h"})


def task(*args: Any, **kwargs: Any) -> Any:
    """invoke's @task, making BenchTasks."""
    return invoke_task(*args, klass=BenchTask, **kwargs)


def reported(body: F) -> F:
    """The one way a task ends on a user's mistake: a one-line error and exit 1; Ctrl-C exits 130."""
    return _reported(body, None)


def reported_saying(interrupted_line: str) -> Callable[[F], F]:
    """`reported`, for a task whose interrupt leaves something other than servers and runs: the line it ends
    with then says what, in that task's own terms."""
    return lambda body: _reported(body, interrupted_line)


def _reported(body: F, interrupted_line: str | None) -> F:
    @functools.wraps(body)
    def run(*args: Any, **kwargs: Any) -> Any:
        task_began()
        try:
            pause_for_test("task-began")
            return body(*args, **kwargs)
        except BenchError as error:
            if interrupted():  # the signal came first; the error is what it broke on its way
                raise Exit(interrupted_line or interrupted_said(), code=130) from None
            raise Exit(f"error: {error}", code=1) from None
        except InterruptedAfterKeeping as kept:
            raise Exit(str(kept), code=130) from None
        except KeyboardInterrupt:
            raise Exit(interrupted_line or interrupted_said(), code=130) from None
        finally:  # the task's outcome is settled: a signal while the interpreter exits changes nothing
            ignore_signals()
            forget_the_escaped_interrupt()

    return run  # type: ignore[return-value]


def help_for_a_task_first(tasks: Collection) -> None:
    """`invoke TASK -h` shows TASK's help. invoke's parser would give -h to the task's first positional
    argument (`invoke recipe -h` ran the recipe "-h"), so that form is handed to `invoke --help TASK`."""
    argv = sys.argv
    if len(argv) == 3 and Path(argv[0]).name in ("invoke", "inv", "__main__.py") and argv[2] in ("-h", "--help"):
        if argv[1] in tasks.task_names or argv[1].replace("-", "_") in tasks.task_names:
            os.execv(sys.executable, [sys.executable, "-m", "invoke", "--help", argv[1]])


def quiet_when_the_reader_leaves() -> None:
    """`invoke recipes | head -1`: once whatever reads standard output has gone, end without a traceback (exit
    1), as a shell tool does; standard output then points at /dev/null, so the exit's flush fails no more. A
    broken pipe anywhere else is still reported in full."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        if issubclass(kind, BrokenPipeError) and _stdout_has_no_reader():
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return
        previous(kind, error, trace)

    sys.excepthook = hook


def _stdout_has_no_reader() -> bool:
    """Whether standard output is a pipe whose reading end is closed (poll reports an error on it)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):  # no standard output, or not a file
        return False
