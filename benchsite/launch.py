"""The load programs' entry points (benchsite-paced, benchsite-witness): an interrupt ends them in one line with
exit code 130 from their first moment, while they still import what they run (numpy, psutil, httptools), which
this module does only once the handler is in place."""

from __future__ import annotations

import os
import signal
from types import FrameType
from typing import NoReturn


def _interrupt_ends_at_once(program: str) -> None:
    def leave(_signum: int, _frame: FrameType | None) -> None:
        os.write(2, f"{program}: interrupted before its schedule began\n".encode())
        os._exit(130)  # a shell's code for a program ended by SIGINT

    signal.signal(signal.SIGINT, leave)


def paced_command() -> NoReturn:
    """The benchsite-paced program."""
    _interrupt_ends_at_once("benchsite-paced")
    from benchsite.tools import paced_client

    signal.signal(signal.SIGINT, signal.default_int_handler)  # from here its own handling says where it was
    paced_client.paced_command()


def witness_command() -> NoReturn:
    """The benchsite-witness program."""
    _interrupt_ends_at_once("benchsite-witness")
    from benchsite.tools import paced_client

    signal.signal(signal.SIGINT, signal.default_int_handler)
    paced_client.witness_command()
