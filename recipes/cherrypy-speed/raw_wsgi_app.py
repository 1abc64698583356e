"""The raw WSGI server under CherryPy serving a bare WSGI app returning OK: cheroot today (CherryPy 9 and
later depend on it), the wsgiserver bundled inside CherryPy up to 8.x (a release sweep runs those).

Usage: python raw_wsgi_app.py PORT [HOST]   (HOST: the address to listen on, 127.0.0.1 by default)
"""

import sys

try:
    from cheroot.wsgi import Server

    NAMED = {}  # cheroot sends its own "Cheroot/<version>" banner
except ImportError:  # CherryPy 8.x and earlier, with no cheroot beside it
    from cherrypy.wsgiserver import CherryPyWSGIServer as Server

    NAMED = {"server_name": "CherryPy-wsgiserver"}  # its banner would otherwise be this machine's hostname


def app(environ, start_response):
    body = b"OK"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


if __name__ == "__main__":
    host = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    server = Server((host, int(sys.argv[1])), app, **NAMED)
    if hasattr(server, "safe_start"):
        server.safe_start()  # serves until SIGTERM or Ctrl-C, then closes the socket
    else:
        try:
            server.start()
        except KeyboardInterrupt:
            server.stop()
