"""Where the runner says what it is doing: a terminal progress display (rich), or nothing."""

from __future__ import annotations

from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchsite.harness.processes.signals import signals_held


class Reporter(Protocol):
    """Where the runner says what it is doing (a progress display, or nothing)."""

    def begin(self, total_steps: int) -> None: ...

    def status(self, message: str) -> None: ...

    def step(self, message: str) -> None: ...


class SilentReporter:
    """A reporter that shows nothing."""

    def begin(self, total_steps: int) -> None:
        pass

    def status(self, message: str) -> None:
        pass

    def step(self, message: str) -> None:
        pass


class RichReporter:
    """Shows which subject, cell and repetition is running, and each result as it lands."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self.task_id = self.progress.add_task("starting", total=None)

    def __enter__(self) -> RichReporter:
        with signals_held():  # its refresh thread never takes a signal: they all go to the main thread
            self.progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.progress.stop()

    def begin(self, total_steps: int) -> None:
        self.progress.update(self.task_id, total=total_steps)

    def status(self, message: str) -> None:
        self.progress.update(self.task_id, description=message)

    def step(self, message: str) -> None:
        self.progress.console.print(f"  {message}", highlight=False)
        self.progress.advance(self.task_id)
