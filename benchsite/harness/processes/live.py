"""Every process on the machine, each read afresh.

psutil's `process_iter` keeps its Process objects by PID from one call to the next, and since psutil 6 it no
longer checks whether a kept PID now belongs to another process: a new process that reused the PID of one seen
earlier is then handed out as the old one, whose methods raise NoSuchProcess, and a search skips it.
"""

from __future__ import annotations

from collections.abc import Iterator

import psutil


def live_processes() -> Iterator[psutil.Process]:
    """A new Process for every PID alive now (those gone meanwhile left out)."""
    for pid in psutil.pids():
        try:
            yield psutil.Process(pid)
        except psutil.NoSuchProcess:
            continue
