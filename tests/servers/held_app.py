"""A real WSGI app for the latency and memory tests, served by cheroot on one thread (or imported by gunicorn).

Usage: python held_app.py PORT [--pause SECONDS] [--hold MB]
--pause S   once a second, one request sleeps S seconds first: the whole server stalls (it has one thread)
--hold MB   the process holds MB mebibytes more, every page written (so counted in its USS)
--delay S   every request sleeps S seconds first (a slow side of an A/B run)
--threads N cheroot's worker threads (1 unless given)
Under gunicorn (`gunicorn held_app:app`), HELD_APP_HOLD_MB holds that much in each worker (imported after the fork).
"""

from __future__ import annotations

import argparse
import os
import time

BODY = b"hello"
_next_pause = [time.monotonic() + 1.0]
_pause_s = [0.0]
_delay_s = [0.0]
_ballast: list[bytearray] = []


def hold(mebibytes: int) -> None:
    """Keep this many MiB, every byte written."""
    if mebibytes > 0:
        _ballast.append(bytearray(b"\x01") * (mebibytes * 2**20))


def app(environ: dict, start_response) -> list[bytes]:  # type: ignore[no-untyped-def]
    if _delay_s[0]:
        time.sleep(_delay_s[0])
    now = time.monotonic()
    if _pause_s[0] and now >= _next_pause[0]:
        _next_pause[0] = now + 1.0
        time.sleep(_pause_s[0])
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))])
    return [BODY]


hold(int(os.environ.get("HELD_APP_HOLD_MB", "0")))

if __name__ == "__main__":
    from cheroot import wsgi

    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--hold", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--threads", type=int, default=1)
    options = parser.parse_args()
    _pause_s[0] = options.pause
    _delay_s[0] = options.delay
    hold(options.hold)
    server = wsgi.Server(("127.0.0.1", options.port), app, numthreads=options.threads, request_queue_size=1024)
    server.safe_start()
