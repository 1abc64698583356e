"""The one error class for a user's mistake or a broken environment."""


class BenchError(Exception):
    """A problem the user can fix; shown as one line, never as a traceback.

    The message says what went wrong and what to do about it.
    """
