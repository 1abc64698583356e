"""The plain WSGI application of the WsgiBoostServer benchmark page."""


def app(environ, start_response):
    content = b"Hello World!"
    response_headers = [("Content-type", "text/plain"), ("Content-Length", str(len(content)))]
    start_response("200 OK", response_headers)
    return [content]
