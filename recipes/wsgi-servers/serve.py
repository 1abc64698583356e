"""Start hello_app on a WSGI server that has no command-line runner of its own.

Usage: python serve.py SERVER PORT [HOST]
(SERVER: bjoern, fastwsgi, meinheld, pyruvate, socketify, wsgiboost)
Every server listens on HOST only (127.0.0.1 by default).
"""

import sys

from hello_app import app

HOST = "127.0.0.1"  # or the third argument


def bjoern(port: int) -> None:
    import bjoern

    bjoern.run(app, HOST, port)


def fastwsgi(port: int) -> None:
    import fastwsgi

    fastwsgi.run(wsgi_app=app, host=HOST, port=port)


def meinheld(port: int) -> None:
    from meinheld import server

    server.set_access_logger(None)  # no per-request log line, like every other server here
    server.listen((HOST, port))
    server.run(app)


def pyruvate(port: int) -> None:
    import pyruvate

    pyruvate.serve(app, f"{HOST}:{port}", 2)  # two worker threads


def socketify(port: int) -> None:
    from socketify import WSGI, AppListenOptions

    WSGI(app).listen(AppListenOptions(port=port, host=HOST), lambda config: None).run()


def wsgiboost(port: int) -> None:
    import wsgi_boost

    httpd = wsgi_boost.WsgiBoostHttp(address=HOST, port=port, threads=10)  # 10 threads, as on its page
    httpd.set_app(app)
    httpd.start()


SERVERS = {f.__name__: f for f in (bjoern, fastwsgi, meinheld, pyruvate, socketify, wsgiboost)}

if __name__ == "__main__":
    name, port = sys.argv[1], int(sys.argv[2])
    HOST = sys.argv[3] if len(sys.argv) > 3 else HOST
    if name not in SERVERS:
        sys.exit(f"serve.py: unknown server {name!r}; I know about {', '.join(SERVERS)}")
    SERVERS[name](port)
