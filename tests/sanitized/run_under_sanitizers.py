"""Run in a Python whose _pacer is the sanitizer build (ASan and UBSan preloaded): generated replies through its
parser, then real loads against a server in a thread, kept alive and not. Any report of the sanitizers ends the
process non-zero.

Usage: python run_under_sanitizers.py PATH_TO_SANITIZED_SO EXAMPLES
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for http_replies

from http_replies import Reply, c_reading, llhttp_reading, replies
from hypothesis import HealthCheck, given, settings

spec = importlib.util.spec_from_file_location("_pacer", sys.argv[1])
assert spec is not None and spec.loader is not None
pacer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pacer)


@settings(max_examples=int(sys.argv[2]), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(replies())
def reads_as_llhttp(reply: Reply) -> None:
    got = pacer.frame(reply.chunks, keepalive=True, closed=reply.closed)
    assert c_reading(got) == llhttp_reading(reply)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"OK")

    def log_message(self, *_: object) -> None:
        pass


def loads() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    request = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    for keepalive in (False, True):
        got = pacer.run(
            family=2,
            host="127.0.0.1",
            port=port,
            request=request,
            rate=200.0,
            count=100,
            connections=8,
            keepalive=keepalive,
            timeout_s=5.0,
        )
        answered = len(got["latencies_us"]) // 8
        assert answered == 100, (keepalive, answered, got)
    server.shutdown()


reads_as_llhttp()
loads()
print("sanitized: clean")
