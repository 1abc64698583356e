"""The raw WSGI server under CherryPy serving a bare WSGI app returning OK: cheroot today (CherryPy 9 and
later depend on it; cheroot 5.x named it WSGIServer), the wsgiserver bundled inside CherryPy up to 8.x (a
release sweep runs those).

Usage: python raw_wsgi_app.py PORT [HOST]   (HOST: the address to listen on, 127.0.0.1 by default)
"""

import sys

try:
    import cheroot
    from cheroot import wsgi

    # cheroot 5.x, which CherryPy 9 to 12 ran on in their day, names the server WSGIServer and sends this
    # machine's hostname as its banner: give it the banner cheroot 6 and later send ("Cheroot/<version>")
    Server = getattr(wsgi, "Server", None) or wsgi.WSGIServer
    NAMED = {"server_name": f"Cheroot/{cheroot.__version__}"} if cheroot.__version__.startswith("5.") else {}
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
