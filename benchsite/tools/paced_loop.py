"""benchsite-witness's event loop, in Python: requests sent on a fixed schedule over non-blocking sockets, each
reply read with httptools, and every outcome counted (answered with its latency, or failed, and why). It is the
open-loop tool's first engine, kept as the witness: a second implementation, at a low rate, that measures the
same server during each load of the C loop (`_pacer.c`). `paced_client` runs either."""

from __future__ import annotations

import errno
import gc
import selectors
import socket
import time
from array import array
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httptools


@dataclass
class Tally:
    """What the run counted."""

    latencies_us: array[int] = field(default_factory=lambda: array("q"))
    lags_us: array[int] = field(default_factory=lambda: array("q"))
    own_lags_us: array[int] = field(default_factory=lambda: array("q"))  # from when it could first have gone
    non_2xx: int = 0
    connect_errors: int = 0
    timeouts: int = 0
    closed: int = 0  # the connection ended before any byte of the reply
    cut_short: int = 0  # it ended within the reply, before its Content-Length or chunked end
    not_http: int = 0  # what came back does not parse as an HTTP response


class Reply:
    """httptools' callbacks for one reply: interim (1xx) replies are skipped, the request ends at its final one."""

    def __init__(self) -> None:
        self.complete = False
        self.headers_done = False
        self.received = False  # any byte of it
        self.delimited = False  # a Content-Length or chunked body: its end is known, not the connection's
        # llhttp's reader of the connection, as RFC 9112 reads a reply: Transfer-Encoding overrides Content-Length
        self.parser = httptools.HttpResponseParser(self)
        self.parser.set_dangerous_leniencies(lenient_chunked_length=True)

    def on_message_begin(self) -> None:
        self.headers_done = self.delimited = False

    def on_header(self, name: bytes, _value: bytes) -> None:
        if name.lower() in (b"content-length", b"transfer-encoding"):
            self.delimited = True

    def on_headers_complete(self) -> None:
        self.headers_done = True

    def on_message_complete(self) -> None:
        self.complete = self.complete or self.parser.get_status_code() >= 200


class Connection:
    """One socket, the request in flight and how many wait for it (kept alive, request i goes to connection
    i mod C, so those waiting are the next `waiting` indices of its own, C apart: a count, never a queue)."""

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.connected = False
        self.waiting = 0
        self.next_index = 0  # the index of the first request waiting for it
        self.current: int | None = None  # the due time of the request in flight
        self.reply = Reply()


@dataclass(frozen=True)
class Target:
    """Where the requests go: the address to connect to, its family, and the request's Host and path."""

    family: socket.AddressFamily
    address: tuple[Any, ...]
    netloc: str
    path: str

    @property
    def shown(self) -> str:
        return self.netloc


def target_of(url: str) -> Target:
    """The URL's target, resolved once; a ValueError saying what is wrong with it."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"{url!r} is not an http:// URL with a host: give one as http://127.0.0.1:8080/")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{url!r} has no port from 1 to 65535: give one as http://127.0.0.1:8080/") from None
    if port is None and parts.netloc.endswith(":"):
        raise ValueError(f"{url!r} has an empty port: give one from 1 to 65535, or none for 80")
    if port == 0:
        raise ValueError(f"{url!r} has port 0, which no server listens on: give one from 1 to 65535")
    try:
        found = socket.getaddrinfo(parts.hostname, port or 80, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise ValueError(
            f"{parts.hostname!r} cannot be resolved ({error}): give an address such as 127.0.0.1"
        ) from None
    family, _, _, _, address = found[0]
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(family, address, parts.netloc, path)


@dataclass(frozen=True)
class Schedule:
    """What to send: the request's bytes, how many, at what rate, over at most how many connections."""

    request: bytes
    count: int
    rate: float
    connections: int
    keepalive: bool
    timeout_s: float


class Paced:
    """The event loop: one thread, epoll, the schedule in nanoseconds of the monotonic clock."""

    def __init__(self, target: Target, schedule: Schedule) -> None:
        self.target = target
        self.request = schedule.request
        self.count = schedule.count
        self.interval_ns = 1e9 / schedule.rate
        self.keepalive = schedule.keepalive
        self.timeout_ns = int(schedule.timeout_s * 1e9)
        self.pool = [Connection() for _ in range(schedule.connections)] if schedule.keepalive else []
        self.limit = schedule.connections
        # Without keep-alive: due requests waiting for a free slot, always the `line` indices before the next due
        # one (a count, never a queue: requests not yet due take no memory, and those due are numbered).
        self.line = 0
        self.index = 0  # the next request to fall due
        self.selector = selectors.DefaultSelector()
        self.tally = Tally()
        self.outstanding = 0
        self.open = self.peak_open = 0  # connections open now, and at most
        self.start = 0  # the schedule's start, on the monotonic clock in ns
        self.refused: list[Connection] = []  # connections refused at once, failed by the loop

    # --- connections -------------------------------------------------------------------------------
    def _open(self, conn: Connection, now: int) -> None:
        sock = socket.socket(self.target.family, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        code = sock.connect_ex(self.target.address)
        if code not in (0, errno.EINPROGRESS):
            sock.close()
            self.refused.append(conn)  # failed by the loop, not here: a line of refusals is no recursion
            return
        conn.sock, conn.connected = sock, False
        self.open += 1
        self.peak_open = max(self.peak_open, self.open)
        conn.reply = Reply()
        self.selector.register(sock, selectors.EVENT_WRITE, conn)

    def _close(self, conn: Connection) -> None:
        if conn.sock is not None:
            self.selector.unregister(conn.sock)
            conn.sock.close()
            self.open -= 1
        conn.sock, conn.connected = None, False

    def _start(self, conn: Connection, due: int, now: int, *, waited: bool = False) -> None:
        """Put a due request in flight on `conn` (connecting first where needed); its send lag counts from when
        it was due, a wait for one of the loop's own connections included; its own lag from when it could first
        have gone (`waited` for a connection: now, the wait being the server's)."""
        self.tally.lags_us.append((now - due) // 1000)
        self.tally.own_lags_us.append(0 if waited else (now - due) // 1000)
        conn.current = now  # the witness's latency counts from when its request left: see run()
        if conn.sock is None:
            self._open(conn, now)
        elif conn.connected:
            self._send(conn, now)

    def _send(self, conn: Connection, now: int) -> None:
        assert conn.sock is not None
        try:
            sent = conn.sock.send(self.request)
        except OSError:
            self._fail(conn, "closed", now)
            return
        if sent != len(self.request):  # a request this small always fits a fresh socket's buffer
            self._fail(conn, "closed", now)

    def _fail(self, conn: Connection, what: str, now: int) -> None:
        """A request failed: `what` is connect_errors, timeouts, closed, cut_short or not_http."""
        setattr(self.tally, what, getattr(self.tally, what) + 1)
        self._close(conn)
        self._finished(conn, now)

    def _done(self, conn: Connection, now: int) -> None:
        assert conn.current is not None
        self.tally.latencies_us.append((now - conn.current) // 1000)
        status = conn.reply.parser.get_status_code()
        if not 200 <= status < 300:
            self.tally.non_2xx += 1
        if not (self.keepalive and conn.reply.parser.should_keep_alive()):
            self._close(conn)
        else:  # the socket stays registered for reading: the next request is sent from _start
            conn.reply = Reply()
        self._finished(conn, now)

    def _finished(self, conn: Connection, now: int) -> None:
        """A request ended (answered or failed): the connection takes its next waiting one."""
        conn.current = None
        self.outstanding -= 1
        if self.keepalive:
            if conn.waiting:
                conn.waiting -= 1
                conn.next_index += len(self.pool)
                self._start(conn, self._due_at(conn.next_index - len(self.pool)), now, waited=True)
        elif self.line:
            self.line -= 1
            self._start(Connection(), self._due_at(self.index - self.line - 1), now, waited=True)

    # --- events -------------------------------------------------------------------------------------
    def _event(self, conn: Connection, now: int) -> None:
        if conn.sock is None:  # closed by an earlier event of the same batch
            return
        if not conn.connected:
            if conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                self._fail(conn, "connect_errors", now)
                return
            conn.connected = True
            self.selector.modify(conn.sock, selectors.EVENT_READ, conn)
            if conn.current is not None:
                self._send(conn, now)
            return
        try:
            data = conn.sock.recv(65536)
        except OSError:
            data = None  # a reset: it ends no reply, not even one read to the connection's close
        if not data:
            if conn.current is None:  # a kept-alive connection the server closed while idle
                self._close(conn)
            elif data is not None and conn.reply.headers_done and not conn.reply.delimited:  # ends with the close
                self._done(conn, now)
            else:
                self._fail(conn, "cut_short" if conn.reply.received else "closed", now)
            return
        conn.reply.received = True
        try:
            conn.reply.parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade):
            self._fail(conn, "not_http", now)
            return
        if conn.reply.complete:
            self._done(conn, now)

    def _due_at(self, index: int) -> int:
        return self.start + int(index * self.interval_ns)

    def _due(self, index: int, now: int) -> None:
        self.outstanding += 1
        if self.keepalive:
            conn = self.pool[index % len(self.pool)]
            if conn.current is None and not conn.waiting:
                self._start(conn, self._due_at(index), now)
            else:
                if not conn.waiting:
                    conn.next_index = index
                conn.waiting += 1
        elif self.outstanding - self.line <= self.limit:
            self._start(Connection(), self._due_at(index), now)
        else:
            self.line += 1

    def _expire(self, now: int) -> None:
        """Requests in flight for longer than the timeout fail (a waiting one's time starts when it is sent)."""
        in_flight = [key.data for key in self.selector.get_map().values()]
        for conn in in_flight:
            if conn.current is not None and now - conn.current > self.timeout_ns:
                self._fail(conn, "timeouts", now)

    def run(self) -> float:
        """Send every request on schedule and wait for the last answers; the elapsed seconds.

        It never spins: as the witness it runs at real-time priority on the server's CPU, where a busy wait
        would take the server's time. So it wakes up to a millisecond late (epoll sleeps in whole ms), and each
        latency counts from when its request left, not from its due time: at its low rate, with connections to
        spare, no request waits for another, and the time is the server's alone. Its send lag says how late
        it was."""
        gc.disable()  # a collection would be a stall of the tool's own
        start = self.start = time.perf_counter_ns() + 20_000_000
        last_check = start
        while True:
            now = time.perf_counter_ns()
            if self.index < self.count and self._due_at(self.index) <= now:
                while self.index < self.count and self._due_at(self.index) <= now:
                    self.index += 1  # before _due: a request that waits in line is one of the indices before it
                    self._due(self.index - 1, now)
            while self.refused:
                self._fail(self.refused.pop(), "connect_errors", now)
            if self.index >= self.count and self.outstanding == 0:
                break
            if now - last_check > 10_000_000:
                self._expire(now)
                last_check = now
                if self.index >= self.count and now - start > self.count * self.interval_ns + 2 * self.timeout_ns:
                    break
            if self.index < self.count:
                wait = max(0.0, (self._due_at(self.index) - now) / 1e9)
            else:
                wait = 0.01
            events = self.selector.select(wait)
            if events:
                for key, _ in events:
                    self._event(key.data, time.perf_counter_ns())
        self.tally.timeouts += self.outstanding  # never answered within the run's last timeout
        gc.enable()
        return (time.perf_counter_ns() - start) / 1e9
