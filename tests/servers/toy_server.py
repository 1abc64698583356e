"""A tiny real HTTP server for the tests' bad-input recipes.

Usage: python toy_server.py PORT [--status N] [--body TEXT] [--hang-after N] [--exit-under-valgrind] [--hang-on-term]
                           [--slow-term SECONDS] [--lose-first-term] [--one-thread]
--hang-after N answers the first N requests, then accepts connections and never answers;
--exit-under-valgrind exits at once with code 3 when it runs under Valgrind (whose preload it sees);
--hang-on-term takes SIGTERM, closes its socket and then never exits (as a server stuck in its shutdown);
--slow-term SECONDS takes SIGTERM, closes its socket and exits that long after (a server with work to finish),
  logging both moments;
--lose-first-term ignores its first SIGTERM (as uWSGI can, during its start) and exits on the next, saying so;
--one-thread answers every request on its main thread (no thread per connection, whose CPU time leaves with it);
--daemonize binds its port, then forks a child that leaves the process group and session (setsid) and serves
  once the parent has gone; the parent exits at once (as a server that daemonizes does, nginx among them, unless
  told not to);
--daemonize-after N (with --one-thread) does so once it has answered N requests, and answers the next only once the
  process it left has exited.
"""

import argparse
import http.server
import itertools
import os
import signal
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("port", type=int)
parser.add_argument("--status", type=int, default=200)
parser.add_argument("--body", default="hello")
parser.add_argument("--hang-after", type=int, default=-1)
parser.add_argument("--exit-under-valgrind", action="store_true")
parser.add_argument("--hang-on-term", action="store_true")
parser.add_argument("--slow-term", type=float, default=0.0)
parser.add_argument("--lose-first-term", action="store_true")
parser.add_argument("--one-thread", action="store_true")
parser.add_argument("--daemonize", action="store_true")
parser.add_argument("--daemonize-after", type=int, default=-1)
options = parser.parse_args()
if options.exit_under_valgrind and "vgpreload" in os.environ.get("LD_PRELOAD", ""):
    sys.exit(3)
served = itertools.count(1)
answered = itertools.count(1)
never = threading.Event()


def daemonize() -> None:
    """Fork; the parent exits at once, the child leaves the session and goes on only once its parent has gone (an
    event, not a delay: the next answer comes from the daemon however busy the machine)."""
    parent = os.getpid()
    if os.fork():
        os._exit(0)
    os.setsid()
    while os.getppid() == parent:
        never.wait(0.001)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if options.hang_after >= 0 and next(served) > options.hang_after:
            never.wait(120)
            return
        body = options.body.encode()
        self.send_response(options.status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        if options.daemonize_after >= 0 and next(answered) == options.daemonize_after:
            daemonize()  # (with --one-thread: the serving loop goes on in the child)

    def log_message(self, *args: object) -> None:
        pass


serving = http.server.HTTPServer if options.one_thread else http.server.ThreadingHTTPServer
server = serving(("127.0.0.1", options.port), Handler)
server.daemon_threads = True
if options.hang_on_term:

    def stuck(signum: int, frame: object) -> None:
        server.socket.close()
        while True:
            never.wait(3600)

    signal.signal(signal.SIGTERM, stuck)
if options.slow_term:

    def finishing(signum: int, frame: object) -> None:
        print(f"took SIGTERM at {time.time():.3f}", flush=True)
        server.socket.close()
        never.wait(options.slow_term)
        print(f"exiting at {time.time():.3f}", flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, finishing)
if options.lose_first_term:
    terms = itertools.count(1)

    def second_term_ends_it(signum: int, frame: object) -> None:
        if next(terms) > 1:
            print("exiting on the second SIGTERM", flush=True)
            os._exit(0)

    signal.signal(signal.SIGTERM, second_term_ends_it)
if options.daemonize:
    daemonize()
server.serve_forever()
