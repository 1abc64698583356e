"""A signal that lands in an awkward place still ends a task with exit 130 and one line.

Each case runs a task body, wrapped as the tasks are (`reported`), in its own interpreter started with `-m`, as
`python -m invoke` is: that is the start-up whose exit CPython overrides after an escaped KeyboardInterrupt.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO

INTERRUPTED = "interrupted: no server of this task was running on this machine; an unfinished run is not kept"

# the handled signal arrives and something catches it (a library's bare `except` during an import, say)
SWALLOWED = textwrap.dedent("""\
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000): pass
    except BaseException:
        pass
    """)

# a subprocess with a preexec_fn forks through CPython's at-fork callbacks (logging registers some): an interrupt
# raised in one cannot propagate, and Python prints it as "Exception ignored" with a traceback
IN_A_FORK_CALLBACK = textwrap.dedent("""\
    def signalled_after_fork() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000): pass
    os.register_at_fork(after_in_parent=signalled_after_fork)
    with signals_as_interrupt():
        subprocess.run(["true"], preexec_fn=lambda: None, check=True)
        checkpoint()
        print("measured", file=sys.stderr)
    """)

BODIES = {
    # dataclasses build their methods with exec() of source text: an interrupt that escapes one sets CPython's
    # flag that ends the process with SIGINT at exit (exit -2), whatever code the task exits with
    "escapes-an-exec-of-text": 'exec("os.kill(os.getpid(), signal.SIGTERM)\\nfor _ in range(1000): pass")',
    # ...then the library fails on what the interrupt broke
    "swallowed-then-an-error": SWALLOWED
    + "raise BenchError(\"profile.name: string should match pattern '<unprintable str object>'\")",
    # ...before the run's own handlers are in place: the run stops as it starts
    "swallowed-before-the-run": SWALLOWED + 'with signals_as_interrupt():\n    print("measured", file=sys.stderr)',
    "in-a-fork-callback": IN_A_FORK_CALLBACK,
}

TASK = """\
import os, signal, subprocess, sys
from benchsite.harness.processes.signals import checkpoint, handle_signals_from_the_start, signals_as_interrupt
handle_signals_from_the_start()
from invoke import Exit
from benchsite.commands.invoking import reported
from benchsite.errors import BenchError

@reported
def body() -> None:
{body}

try:
    body()
except Exit as ended:
    print(ended.message, file=sys.stderr)
    sys.exit(ended.code)
"""


@pytest.mark.parametrize("case", BODIES)
def test_an_interrupt_in_an_awkward_place_exits_130_with_one_line(case: str, tmp_path: Path) -> None:
    (tmp_path / "awkward_task.py").write_text(TASK.format(body=textwrap.indent(BODIES[case], "    ")))
    ended = subprocess.run(
        [sys.executable, "-m", "awkward_task"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (ended.returncode, ended.stderr) == (130, INTERRUPTED + "\n")
