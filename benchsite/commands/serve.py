"""`invoke serve`: the built site on the loopback, until Ctrl-C."""

from __future__ import annotations

import functools
import http.server
from pathlib import Path

from benchsite.commands.terminal import say
from benchsite.errors import BenchError


def port_number(text: str) -> int:
    """A TCP port from the command line: 0 (any free one) to 65535."""
    if not text.isdigit() or int(text) > 65535:
        raise BenchError(f"--port {text!r} is not a port: give a number from 1 to 65535, or 0 for any free port")
    return int(text)


def serve_site(directory: Path, port: str) -> None:
    """Serve the built site on 127.0.0.1:port; a missing build or a taken port is a one-line error."""
    number = port_number(port)
    if not (directory / "index.html").is_file():
        raise BenchError(f"no built site in {directory}: run `.venv/bin/invoke docs` first")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", number), handler)
    except OSError as error:
        raise BenchError(f"cannot listen on 127.0.0.1:{port} ({error.strerror}): choose another --port") from None
    with server:
        say(f"serving {directory} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
