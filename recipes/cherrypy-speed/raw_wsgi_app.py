"""The raw WSGI server under CherryPy (cheroot today) serving a bare WSGI app returning OK.

Usage: python raw_wsgi_app.py PORT [HOST]   (HOST: the address to listen on, 127.0.0.1 by default)
"""

import sys

from cheroot import wsgi


def app(environ, start_response):
    body = b"OK"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


if __name__ == "__main__":
    host = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    server = wsgi.Server((host, int(sys.argv[1])), app)
    server.safe_start()  # serves until SIGTERM or Ctrl-C, then closes the socket
