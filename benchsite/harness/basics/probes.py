"""Asking a started server whether it is ready: an HTTP GET, the HTTP/1.0 keep-alive probe, a TCP connect."""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from benchsite.errors import BenchError
from benchsite.harness.processes.processes import LOOPBACK, POLL_INTERVAL_S, RunningServer


@dataclass(frozen=True)
class HttpReply:
    """One HTTP response, as the readiness probe and the verification saw it."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


def http_get(port: int, path: str, timeout_s: float = 5.0, address: str = LOOPBACK) -> HttpReply:
    """One HTTP/1.1 GET to address:port (the loopback by default), connection closed afterwards."""
    connection = http.client.HTTPConnection(address, port, timeout=timeout_s)
    try:
        connection.request("GET", path, headers={"Connection": "close"})
        response = connection.getresponse()
        return HttpReply(response.status, response.getheaders(), response.read())
    finally:
        connection.close()


def _exited_at_start(server: RunningServer, code: int, still_answers: Callable[[], object]) -> BenchError:
    """Why a subject's first process exited before it was ready: a daemon it left behind still answering, or the
    telling lines of its log."""
    try:
        still_answers()
    except (ConnectionError, TimeoutError, http.client.HTTPException, OSError):
        pass
    else:
        return BenchError(
            f"subject {server.name!r} daemonized: its process exited (code {code}) while port {server.port} still "
            "answers: run it in the foreground (its no-daemon option) in the recipe; what it left running is stopped"
        )
    detail = server.telling()
    return BenchError(
        f"subject {server.name!r} exited with code {code} at start"
        + (f" ({detail})" if detail else "")
        + f": run its command by hand to see why: {server.by_hand()}"
    )


def wait_until_ready(server: RunningServer, get: Callable[[], HttpReply], timeout_s: float) -> HttpReply:
    """Poll the server with real requests (`get`) until it answers; fail fast if it exits (before or while it
    first answers)."""
    deadline = time.monotonic() + timeout_s
    while True:
        _fail_if_exited(server, get)
        try:
            reply = get()
        except (ConnectionError, TimeoutError, http.client.HTTPException, OSError):
            if time.monotonic() > deadline:
                raise BenchError(
                    f"subject {server.name!r} did not answer on port {server.port} within "
                    f"{timeout_s:g} s: raise start_timeout_s in the recipe's conf file if it is slow to start"
                ) from None
            time.sleep(POLL_INTERVAL_S)
            continue
        _fail_if_exited(server, get)  # a daemon's first process may exit while what it left answers
        return reply


def _fail_if_exited(server: RunningServer, get: Callable[[], HttpReply]) -> None:
    """Refuse a subject whose first process has exited, saying whether what it left still answers."""
    code = server.exit_code()
    if code is not None:
        raise _exited_at_start(server, code, get)


def keeps_http10_alive(port: int, path: str, timeout_s: float = 3.0, address: str = LOOPBACK) -> bool:
    """Whether the server answers a second HTTP/1.0 keep-alive request on the same connection (as ab -k needs)."""
    request = f"GET {path} HTTP/1.0\r\nHost: {address}\r\nConnection: Keep-Alive\r\n\r\n".encode()
    try:
        with socket.create_connection((address, port), timeout=timeout_s) as sock:
            for _ in range(2):
                sock.sendall(request)
                response = http.client.HTTPResponse(sock)
                response.begin()
                response.read()
                if response.will_close:
                    return False
            return True
    except (OSError, http.client.HTTPException):
        return False


def accepts_connections(address: str, port: int, timeout_s: float = 1.0) -> bool:
    """Whether address:port accepts a TCP connection now."""
    try:
        with socket.create_connection((address, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def _accepting(accepts: Callable[[], bool]) -> Callable[[], None]:
    """`accepts` as a probe that raises where nothing accepts (as an HTTP GET does where nothing answers)."""

    def probe() -> None:
        if not accepts():
            raise ConnectionRefusedError

    return probe


def wait_until_accepting(server: RunningServer, accepts: Callable[[], bool], timeout_s: float) -> None:
    """Poll until the server accepts TCP connections (`accepts`; backends that do not speak HTTP)."""
    deadline = time.monotonic() + timeout_s
    while True:
        code = server.exit_code()
        if code is not None:
            raise _exited_at_start(server, code, _accepting(accepts))
        if accepts():
            return
        if time.monotonic() > deadline:
            raise BenchError(
                f"subject {server.name!r} did not accept connections on port {server.port} "
                f"within {timeout_s:g} s: raise start_timeout_s in the recipe's conf file"
            )
        time.sleep(POLL_INTERVAL_S)


def port_answers(address: str, port: int, timeout_s: float = 2.0) -> bool:
    """Whether something accepts a TCP connection on address:port now."""
    try:
        with socket.create_connection((address, port), timeout=timeout_s):
            return True
    except OSError:
        return False
