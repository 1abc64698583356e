"""Time one Python HTTP client making sequential GET requests, as a real program would.

Usage: python client_bench.py CLIENT MODE URL REQUESTS WARMUP CAFILE

Certificate verification is configured once, when the client (session, pool, handle) is
made, not per request. WARMUP requests run first and are not timed. The timed loop's own
CPU time (time.process_time: every thread of this process) and wall time are printed as one
JSON line. Modes: "reuse" keeps one connection open; "noreuse" opens one per request.
"""

import asyncio
import json
import os
import ssl
import sys
import time
from collections.abc import Callable
from importlib import metadata

# Trust exactly the CA named on the command line: variables such as REQUESTS_CA_BUNDLE would
# silently override a requests Session's `verify` (and SSL_CERT_FILE the default contexts).
for variable in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"):
    os.environ.pop(variable, None)

Fetch = Callable[[], tuple[int, int]]  # one request: (status, body bytes)


def pycurl_fetcher(mode: str, url: str, cafile: str) -> Fetch:
    """pycurl's variants from the original: reuse the handle or not, keep the body or discard it."""
    import io

    import pycurl

    def configure(handle: "pycurl.Curl") -> None:
        handle.setopt(pycurl.URL, url)
        handle.setopt(pycurl.CAINFO, cafile)
        if mode.startswith("noreuse"):
            handle.setopt(pycurl.FORBID_REUSE, 1)
            handle.setopt(pycurl.FRESH_CONNECT, 1)

    shared = pycurl.Curl()
    configure(shared)

    def perform(handle: "pycurl.Curl", keep_body: bool) -> tuple[int, int]:
        received = 0
        if keep_body:
            buffer = io.BytesIO()
            handle.setopt(pycurl.WRITEDATA, buffer)
        else:

            def discard(chunk: bytes) -> None:
                nonlocal received
                received += len(chunk)

            handle.setopt(pycurl.WRITEFUNCTION, discard)
        handle.perform()
        size = len(buffer.getvalue()) if keep_body else received
        return handle.getinfo(pycurl.RESPONSE_CODE), size

    if mode == "reuse-discard":
        return lambda: perform(shared, keep_body=False)
    if mode in ("reuse-buffer", "noreuse-reuse-handle"):
        return lambda: perform(shared, keep_body=True)
    if mode == "noreuse-new-handle":

        def new_handle() -> tuple[int, int]:
            handle = pycurl.Curl()
            configure(handle)
            try:
                return perform(handle, keep_body=True)
            finally:
                handle.close()

        return new_handle
    raise SystemExit(f"client_bench.py: pycurl has no mode {mode!r}")


def requests_fetcher(mode: str, url: str, cafile: str, module: str = "requests") -> Fetch:
    """requests (or niquests): a Session for reuse; the module-level get() for no reuse, as in the original."""
    library = __import__(module)
    if mode == "reuse":
        session = library.Session()
        session.verify = cafile

        def get() -> tuple[int, int]:
            response = session.get(url)
            return response.status_code, len(response.content)

        return get
    if mode == "noreuse":

        def get_once() -> tuple[int, int]:
            response = library.get(url, verify=cafile)
            return response.status_code, len(response.content)

        return get_once
    raise SystemExit(f"client_bench.py: {module} has no mode {mode!r}")


def urllib3_fetcher(mode: str, url: str, cafile: str) -> Fetch:
    """One PoolManager; no reuse asks the server to close after each response."""
    import urllib3

    pool = urllib3.PoolManager(ca_certs=cafile)
    headers = {"Connection": "close"} if mode == "noreuse" else {}

    def get() -> tuple[int, int]:
        response = pool.request("GET", url, headers=headers, retries=False)
        return response.status, len(response.data)

    return get


def urllib_fetcher(mode: str, url: str, cafile: str) -> Fetch:
    """The standard library: urlopen opens a new connection for every request."""
    import urllib.request

    if mode != "noreuse":
        raise SystemExit("client_bench.py: urllib only opens a new connection per request (mode noreuse)")
    context = ssl.create_default_context(cafile=cafile)

    def get() -> tuple[int, int]:
        with urllib.request.urlopen(url, context=context) as response:
            return response.status, len(response.read())

    return get


def httpx_fetcher(mode: str, url: str, cafile: str) -> Fetch:
    """One httpx.Client; no reuse asks the server to close after each response."""
    import httpx

    client = httpx.Client(verify=ssl.create_default_context(cafile=cafile))
    headers = {"Connection": "close"} if mode == "noreuse" else {}

    def get() -> tuple[int, int]:
        response = client.get(url, headers=headers)
        return response.status_code, len(response.content)

    return get


def aiohttp_fetcher(mode: str, url: str, cafile: str) -> Fetch:
    """One aiohttp session on one event loop, requests awaited one after another."""
    import aiohttp

    loop = asyncio.new_event_loop()
    context = ssl.create_default_context(cafile=cafile)

    async def make_session() -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(ssl=context, force_close=(mode == "noreuse"))
        return aiohttp.ClientSession(connector=connector)

    session = loop.run_until_complete(make_session())

    async def fetch() -> tuple[int, int]:
        async with session.get(url) as response:
            return response.status, len(await response.read())

    return lambda: loop.run_until_complete(fetch())


FETCHERS: dict[str, Callable[[str, str, str], Fetch]] = {
    "pycurl": pycurl_fetcher,
    "requests": requests_fetcher,
    "niquests": lambda mode, url, cafile: requests_fetcher(mode, url, cafile, module="niquests"),
    "urllib3": urllib3_fetcher,
    "urllib": urllib_fetcher,
    "httpx": httpx_fetcher,
    "aiohttp": aiohttp_fetcher,
}


def versions(client: str) -> dict[str, str]:
    found = {"python": sys.version.split()[0], "openssl": ssl.OPENSSL_VERSION}
    if client != "urllib":
        found[client] = metadata.version(client)
    if client == "pycurl":
        import pycurl

        found["libcurl"] = pycurl.version
    return found


def main() -> None:
    client, mode, url, requests, warmup, cafile = sys.argv[1:7]
    if client not in FETCHERS:
        raise SystemExit(f"client_bench.py: unknown client {client!r}; I know about {', '.join(FETCHERS)}")
    fetch = FETCHERS[client](mode, url, cafile)
    for _ in range(int(warmup)):
        fetch()
    received = errors = non_2xx = 0
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    for _ in range(int(requests)):
        try:
            status, size = fetch()
        except Exception:
            errors += 1
            continue
        received += size
        non_2xx += not 200 <= status < 300
    cpu_s, wall_s = time.process_time() - cpu_start, time.perf_counter() - wall_start
    print(
        json.dumps(
            {
                "client": client,
                "mode": mode,
                "url": url,
                "requests": int(requests),
                "cpu_s": cpu_s,
                "wall_s": wall_s,
                "bytes_received": received,
                "errors": errors,
                "non_2xx_responses": non_2xx,
                "versions": versions(client),
            }
        )
    )


if __name__ == "__main__":
    main()
