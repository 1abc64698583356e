"""benchsite-paced: an open-loop HTTP/1.1 load tool. Requests go out on a fixed schedule, whatever the
earlier ones are doing, and each one's latency counts from the moment it was meant to be sent.

A closed loop (ab, wrk) sends a client's next request only when the last one came back, so a server that
stops for 100 ms delays one request and the load with it. Here request i is due at start + i / rate; with
kept-alive connections it goes to connection i mod C (waiting there if that connection is still busy, as
wrk2 does), else on a new connection of its own (at most C open, the rest waiting in line). Either way a
stall is charged to every request it delayed. The report also says how late the tool itself sent (its
send lag, after a connection was free) and how busy it was (the share of the time it spent sending and
reading rather than waiting for the next due time): a late or saturated tool cannot hold the rate, and its
figures decide nothing.
"""

from __future__ import annotations

import argparse
import errno
import gc
import selectors
import socket
import sys
import time
from array import array
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httptools
import numpy as np

VERSION = "benchsite-paced 1"
PERCENTILES = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0)
SPIN_S = 0.002  # within this of a due time the loop polls instead of sleeping (epoll sleeps in whole ms)
BUCKETS_PER_DECADE = 40  # the histogram's bucket edges, about 6 % apart


@dataclass
class Tally:
    """What the run counted."""

    latencies_us: array[int] = field(default_factory=lambda: array("q"))
    lags_us: array[int] = field(default_factory=lambda: array("q"))
    non_2xx: int = 0
    connect_errors: int = 0
    read_errors: int = 0
    timeouts: int = 0


class Reply:
    """httptools' callbacks for one reply."""

    def __init__(self) -> None:
        self.complete = False
        self.headers_done = False

    def on_headers_complete(self) -> None:
        self.headers_done = True

    def on_message_complete(self) -> None:
        self.complete = True


class Connection:
    """One socket and the requests waiting for it (their due times, in ns)."""

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.connected = False
        self.waiting: deque[int] = deque()
        self.current: int | None = None  # the due time of the request in flight
        self.free_since = 0
        self.reply = Reply()
        self.parser = httptools.HttpResponseParser(self.reply)


class Paced:
    """The event loop: one thread, epoll, the schedule in nanoseconds of the monotonic clock."""

    def __init__(self, url: str, rate: float, duration_s: float, connections: int, keepalive: bool, timeout_s: float):
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise SystemExit(f"benchsite-paced: {url!r} is not an http:// URL")
        self.address = (parts.hostname, parts.port or 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        close = "" if keepalive else "Connection: close\r\n"
        self.request = (
            f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUser-Agent: {VERSION}\r\nAccept: */*\r\n{close}\r\n"
        ).encode()
        self.count = max(1, round(rate * duration_s))
        self.interval_ns = 1e9 / rate
        self.keepalive = keepalive
        self.timeout_ns = int(timeout_s * 1e9)
        self.pool = [Connection() for _ in range(connections)] if keepalive else []
        self.limit = connections
        self.line: deque[int] = deque()  # without keep-alive: due requests waiting for a free slot
        self.selector = selectors.DefaultSelector()
        self.tally = Tally()
        self.outstanding = 0
        self.busy_ns = 0  # time spent sending and reading, not sleeping or polling for the next due time

    # --- connections -------------------------------------------------------------------------------
    def _open(self, conn: Connection, now: int) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        code = sock.connect_ex(self.address)
        if code not in (0, errno.EINPROGRESS):
            sock.close()
            self._fail(conn, "connect", now)
            return
        conn.sock, conn.connected = sock, False
        conn.reply = Reply()
        conn.parser = httptools.HttpResponseParser(conn.reply)
        self.selector.register(sock, selectors.EVENT_WRITE, conn)

    def _close(self, conn: Connection) -> None:
        if conn.sock is not None:
            self.selector.unregister(conn.sock)
            conn.sock.close()
        conn.sock, conn.connected = None, False

    def _start(self, conn: Connection, due: int, now: int, free_since: int = 0) -> None:
        """Put a due request in flight on `conn` (connecting first where needed); its send lag counts from when
        it was due or its connection (or slot) came free, whichever was later."""
        self.tally.lags_us.append((now - max(due, conn.free_since, free_since)) // 1000)
        conn.current = due
        if conn.sock is None:
            self._open(conn, now)
        elif conn.connected:
            self._send(conn, now)

    def _send(self, conn: Connection, now: int) -> None:
        assert conn.sock is not None
        try:
            sent = conn.sock.send(self.request)
        except OSError:
            self._fail(conn, "read", now)
            return
        if sent != len(self.request):  # a request this small always fits a fresh socket's buffer
            self._fail(conn, "read", now)

    def _fail(self, conn: Connection, what: str, now: int) -> None:
        if what == "connect":
            self.tally.connect_errors += 1
        elif what == "timeout":
            self.tally.timeouts += 1
        else:
            self.tally.read_errors += 1
        self._close(conn)
        self._finished(conn, now)

    def _done(self, conn: Connection, now: int) -> None:
        assert conn.current is not None
        self.tally.latencies_us.append((now - conn.current) // 1000)
        status = conn.parser.get_status_code()
        if not 200 <= status < 300:
            self.tally.non_2xx += 1
        if not (self.keepalive and conn.parser.should_keep_alive()):
            self._close(conn)
        else:  # the socket stays registered for reading: the next request is sent from _start
            conn.reply = Reply()
            conn.parser = httptools.HttpResponseParser(conn.reply)
        self._finished(conn, now)

    def _finished(self, conn: Connection, now: int) -> None:
        """A request ended (answered or failed): the connection takes its next waiting one."""
        conn.current = None
        conn.free_since = now
        self.outstanding -= 1
        if self.keepalive:
            if conn.waiting:
                self._start(conn, conn.waiting.popleft(), now)
        elif self.line:
            self._start(Connection(), self.line.popleft(), now, free_since=now)

    # --- events -------------------------------------------------------------------------------------
    def _event(self, conn: Connection, now: int) -> None:
        if conn.sock is None:  # closed by an earlier event of the same batch
            return
        if not conn.connected:
            if conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                self._fail(conn, "connect", now)
                return
            conn.connected = True
            self.selector.modify(conn.sock, selectors.EVENT_READ, conn)
            if conn.current is not None:
                self._send(conn, now)
            return
        try:
            data = conn.sock.recv(65536)
        except OSError:
            data = None
        if not data:
            if conn.current is None:  # a kept-alive connection the server closed while idle
                self._close(conn)
            elif conn.reply.headers_done:  # a reply that ends with the connection
                self._done(conn, now)
            else:
                self._fail(conn, "read", now)
            return
        try:
            conn.parser.feed_data(data)
        except httptools.HttpParserError:
            self._fail(conn, "read", now)
            return
        if conn.reply.complete:
            self._done(conn, now)

    def _due(self, due: int, index: int, now: int) -> None:
        self.outstanding += 1
        if self.keepalive:
            conn = self.pool[index % len(self.pool)]
            if conn.current is None and not conn.waiting:
                self._start(conn, due, now)
            else:
                conn.waiting.append(due)
        elif self.outstanding - len(self.line) <= self.limit:
            self._start(Connection(), due, now)
        else:
            self.line.append(due)

    def _expire(self, now: int) -> None:
        """Requests in flight for longer than the timeout fail (a waiting one's time starts when it is sent)."""
        in_flight = [key.data for key in self.selector.get_map().values()]
        for conn in in_flight:
            if conn.current is not None and now - conn.current > self.timeout_ns:
                self._fail(conn, "timeout", now)

    def run(self) -> float:
        """Send every request on schedule and wait for the last answers; the elapsed seconds."""
        gc.disable()  # a collection would be a stall of the tool's own
        start = time.perf_counter_ns() + 20_000_000
        index = 0
        last_check = start
        while True:
            now = time.perf_counter_ns()
            if index < self.count and start + int(index * self.interval_ns) <= now:
                while index < self.count and start + int(index * self.interval_ns) <= now:
                    self._due(start + int(index * self.interval_ns), index, now)
                    index += 1
                self.busy_ns += time.perf_counter_ns() - now
            if index >= self.count and self.outstanding == 0:
                break
            if now - last_check > 10_000_000:
                self._expire(now)
                last_check = now
                if index >= self.count and now - start > self.count * self.interval_ns + 2 * self.timeout_ns:
                    break
            if index < self.count:
                wait = (start + int(index * self.interval_ns) - now) / 1e9 - SPIN_S
                wait = max(0.0, wait)
            else:
                wait = 0.01
            events = self.selector.select(wait)
            if events:
                began = time.perf_counter_ns()
                for key, _ in events:
                    self._event(key.data, time.perf_counter_ns())
                self.busy_ns += time.perf_counter_ns() - began
        self.tally.timeouts += self.outstanding  # never answered within the run's last timeout
        gc.enable()
        return (time.perf_counter_ns() - start) / 1e9


def histogram(latencies_us: np.ndarray) -> list[tuple[int, int]]:
    """(upper edge in µs, count) of the non-empty log-spaced buckets."""
    edges = np.unique(np.ceil(np.logspace(0, 9, 9 * BUCKETS_PER_DECADE + 1)).astype(np.int64))
    counts, _ = np.histogram(np.maximum(latencies_us, 1), bins=np.concatenate(([0], edges)))
    return [(int(edges[i]), int(count)) for i, count in enumerate(counts) if count]


def report(paced: Paced, rate: float, duration_s: float, connections: int, elapsed_s: float) -> str:
    tally = paced.tally
    latencies = np.frombuffer(tally.latencies_us, dtype=np.int64) if tally.latencies_us else np.zeros(0, np.int64)
    lags = np.frombuffer(tally.lags_us, dtype=np.int64) if tally.lags_us else np.zeros(1, np.int64)
    mode = "kept alive" if paced.keepalive else "one per request"
    lines = [
        VERSION,
        f"offered: {rate:.3f} req/s for {duration_s:.3f} s, {connections} connections, {mode}",
        f"scheduled: {paced.count}",
        f"completed: {len(latencies)}",
        f"errors: {tally.connect_errors} connect, {tally.read_errors} read, {tally.timeouts} timeout",
        f"non-2xx: {tally.non_2xx}",
        f"elapsed: {elapsed_s:.6f} s",
        f"achieved: {len(latencies) / elapsed_s:.3f} req/s",
        f"busy: {paced.busy_ns / 1e9 / elapsed_s:.3f} of the elapsed time",
    ]
    lag_at = np.percentile(lags, [50, 99, 100], method="inverted_cdf")
    lines.append(f"send lag us: p50 {int(lag_at[0])} p99 {int(lag_at[1])} max {int(lag_at[2])}")
    if len(latencies):
        lines.append(f"latency us: min {int(latencies.min())} mean {latencies.mean():.1f} max {int(latencies.max())}")
        at = np.percentile(latencies, PERCENTILES, method="inverted_cdf")
        lines += [f"percentile us: {p:g} {int(value)}" for p, value in zip(PERCENTILES, at, strict=True)]
        lines += [f"bucket us: {upper} {count}" for upper, count in histogram(latencies)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchsite-paced", description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--rate", type=float, required=True, help="requests per second, sent on schedule")
    parser.add_argument("--duration", type=float, required=True, help="seconds of schedule")
    parser.add_argument("--connections", type=int, default=10, help="kept-alive connections, or at most open")
    parser.add_argument("--keepalive", action="store_true", help="reuse connections (HTTP/1.1 keep-alive)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds a request may take")
    parser.add_argument("--version", action="version", version=VERSION)
    args = parser.parse_args(argv)
    if not 0 < args.rate <= 1e6 or not 0 < args.duration <= 3600 or not 1 <= args.connections <= 20000:
        parser.error("--rate must be in (0, 1e6], --duration in (0, 3600], --connections in [1, 20000]")
    paced = Paced(args.url, args.rate, args.duration, args.connections, args.keepalive, args.timeout)
    elapsed_s = paced.run()
    sys.stdout.write(report(paced, args.rate, args.duration, args.connections, elapsed_s))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
