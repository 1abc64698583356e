"""A Python SCGI backend (flup) behind the web servers: the Django feed, or a fixed 693-byte page.

Usage: python scgi_backend.py feed PORT DATABASE_PATH
       python scgi_backend.py hello PORT
"""

import logging
import os
import sys

from flup.server.scgi import WSGIServer

HELLO = b"<html><head><title>SCGI</title></head><body><p>" + b"x" * 627 + b"</p></body></html>\n"
assert len(HELLO) == 693  # the size of the original's SCGI response


def hello(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(HELLO)))])
    return [HELLO]


def feed_application():
    os.environ["FEED_DATABASE"] = sys.argv[3]
    os.environ["DJANGO_SETTINGS_MODULE"] = "feedsite.settings"
    from django.core.wsgi import get_wsgi_application

    return get_wsgi_application()


if __name__ == "__main__":
    application = feed_application() if sys.argv[1] == "feed" else hello
    # loggingLevel WARNING: no log line per request (flup logs every request at INFO).
    WSGIServer(application, bindAddress=("127.0.0.1", int(sys.argv[2])), loggingLevel=logging.WARNING).run()
