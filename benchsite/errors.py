"""The one error class for a user's mistake or a broken environment."""


class BenchError(Exception):
    """A problem the user can fix; shown as one line, never as a traceback.

    The message says what went wrong and what to do about it.
    """


class InterruptedAfterKeeping(Exception):  # noqa: N818 - not an error: the run was kept
    """A signal arrived after a run was complete and in place: the run is kept, the command exits 130."""
