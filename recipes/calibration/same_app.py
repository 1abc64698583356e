"""The calibration's one app, run as three subjects: a bare WSGI app on cheroot answering OK.

Usage: python same_app.py PORT [HOST]   (HOST: the address to listen on, 127.0.0.1 by default)
"""

import sys

from cheroot.wsgi import Server


def hello(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"OK"]


if __name__ == "__main__":
    listen = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    Server((listen, int(sys.argv[1])), hello).safe_start()
