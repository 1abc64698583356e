"""Bottle's "Hello World" app on the Bottle server adapter named on the command line.

Usage: python bottle_app.py ADAPTER PORT [--host ADDRESS] [--queue N]

--queue raises the listen queue (backlog) through the adapter's own options, for
the adapters whose default queue is small.

One deviation from Bottle: its fapws3 adapter calls depr() with a missing argument and
fails before it starts (Bottle 0.13.4), so "fapws3" runs a copy of that adapter without
the call. Everything else is the adapter's own code.
"""

import argparse
import sys
from typing import Any

parser = argparse.ArgumentParser()
parser.add_argument("adapter")
parser.add_argument("port", type=int)
parser.add_argument("--host", default="127.0.0.1", help="the address to listen on")
parser.add_argument("--queue", type=int, help="listen queue size passed through the adapter's options")
options = parser.parse_args()

# Bottle's gevent and eventlet adapters refuse to start unless the standard
# library was monkey-patched before anything else was imported.
if options.adapter == "gevent":
    from gevent import monkey

    monkey.patch_all()
elif options.adapter == "eventlet":
    import eventlet

    eventlet.monkey_patch()

import bottle  # noqa: E402

app = bottle.Bottle()


@app.route("/")
def index() -> str:
    return "Hello World"


def queue_options(adapter: str, size: int) -> dict:
    """How each adapter with a small default listen queue lets a user raise it."""
    if adapter == "wsgiref":
        from wsgiref.simple_server import WSGIServer

        class QueuedWSGIServer(WSGIServer):
            request_queue_size = size

        return {"server_class": QueuedWSGIServer}
    if adapter in ("paste", "cheroot"):
        return {"request_queue_size": size}
    sys.exit(f"bottle_app.py: no queue option known for adapter {adapter!r}")


class FapwsServer(bottle.ServerAdapter):
    """Bottle's FapwsServer without its broken deprecation call (TypeError: depr() missing 'fix')."""

    def run(self, handler: Any) -> None:
        from fapws import _evwsgi as evwsgi
        from fapws import base

        evwsgi.start(self.host, str(self.port))
        evwsgi.set_base_module(base)

        def app(environ: dict, start_response: Any) -> Any:
            environ["wsgi.multiprocess"] = False
            return handler(environ, start_response)

        evwsgi.wsgi_cb(("", app))
        evwsgi.run()


if options.adapter == "fapws3":
    options.adapter = FapwsServer

if options.adapter == "meinheld":  # quiet=True does not reach meinheld's own access log
    from meinheld import server as meinheld_server

    meinheld_server.set_access_logger(None)

extra = queue_options(options.adapter, options.queue) if options.queue else {}
bottle.run(app, server=options.adapter, host=options.host, port=options.port, quiet=True, **extra)
