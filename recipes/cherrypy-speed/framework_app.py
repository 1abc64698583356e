"""The CherryPy framework app of "How fast is CherryPy?": one exposed index returning OK.

Usage: python framework_app.py PORT [HOST]   (HOST: the address to listen on, 127.0.0.1 by default)
"""

import sys

import cherrypy


class Root:
    @cherrypy.expose
    def index(self) -> bytes:
        # Bytes, not str: clearing the config below also removes tools.encode.
        return b"OK"


if __name__ == "__main__":
    # Remove CherryPy's default tools to time the request-processing stack itself.
    cherrypy.config.clear()
    cherrypy.config.update(
        {
            "log.screen": False,  # no per-request console logging
            "engine.autoreload.on": False,  # no file watcher thread competing for the CPU
            "server.socket_host": sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1",
            "server.socket_port": int(sys.argv[1]),
        }
    )
    cherrypy.quickstart(Root())
