"""benchsite-paced against servers that fail it: nothing listening, a server that closes every connection, never
answers, answers garbage or cuts a reply short. The program (as the harness runs it) exits non-zero with one line
naming why wherever most requests failed, refuses every bad argument in a line of its own, and ends an interrupt
without a traceback."""

from __future__ import annotations

import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchsite.tools.paced import parse_paced_output

PROGRAM = str(Path(sys.executable).with_name("benchsite-paced"))
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK"
REPLIES = {
    "to the end of the connection": b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nOK",
    "cut short": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nabc",
    "cut before the chunked end": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n",
    "garbage": b"this is not an HTTP reply\r\n\r\n",
    "nothing": b"",
    "a NUL in its head": b"HTTP/1.1 200 OK\r\nX-Nul: a\x00b\r\nContent-Length: 2\r\n\r\nOK",
    "an empty length": b"HTTP/1.1 200 OK\r\nContent-Length:\r\nX-Next: 2\r\n\r\nOK",
    "a length past 64 bits": b"HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775808\r\n\r\nOK",
}


class Server:
    """A TCP server in a thread on a loopback address: each connection gets `reply` once a request came, then is
    closed (None: never answered, held open until the server stops). `keep_alive`: each connection is served in a
    thread of its own, every request on it answered, until the client closes it: a server that closed a connection
    its reply kept alive would race the client's next request on it, and lose it on a busy machine."""

    def __init__(
        self,
        reply: bytes | None,
        family: socket.AddressFamily = socket.AF_INET,
        reset: bool = False,
        keep_alive: bool = False,
    ) -> None:
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        self.listener.bind(("::1" if family == socket.AF_INET6 else "127.0.0.1", 0))
        self.listener.listen(128)
        self.reply = reply
        self.reset = reset  # end each connection with a reset (SO_LINGER 0), not an orderly close
        self.keep_alive = keep_alive
        self.accepted = threading.Event()
        self.stopping = threading.Event()
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.listener.getsockname()[:2]
        return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"

    def _serve(self) -> None:
        self.listener.settimeout(0.05)
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted.set()
            if self.reply is None:
                self.held.append(conn)
            elif self.keep_alive:
                threading.Thread(target=self._answer_each, args=(conn, self.reply), daemon=True).start()
            else:
                self._answer_once(conn, self.reply)

    def _answer_once(self, conn: socket.socket, reply: bytes) -> None:
        try:
            conn.settimeout(5)
            conn.recv(65536)
            conn.sendall(reply)
            if self.reset:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        conn.close()

    @staticmethod
    def _answer_each(conn: socket.socket, reply: bytes) -> None:
        with conn:
            try:
                conn.settimeout(5)
                while conn.recv(65536):
                    conn.sendall(reply)
            except OSError:
                pass


@contextmanager
def serving(
    reply: bytes | None, family: socket.AddressFamily = socket.AF_INET, reset: bool = False, keep_alive: bool = False
) -> Iterator[Server]:
    server = Server(reply, family, reset, keep_alive)
    server.thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.thread.join()
        for conn in server.held:
            conn.close()
        server.listener.close()


def paced(url: str, *args: str, rate: str = "50", duration: str = "1") -> subprocess.CompletedProcess[str]:
    argv = [PROGRAM, "--rate", rate, "--duration", duration, "--timeout", "1", *args, url]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def a_free_port() -> int:
    """A port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


ANSWERED = {
    "to the end of the connection": REPLIES["to the end of the connection"],
    "chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nOK\r\n1\r\n!\r\n0\r\nA: b\r\n\r\n",
    "HTTP/1.0": b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nOK",
    "no body": b"HTTP/1.1 204 No Content\r\n\r\n",
    # An interim reply first: the request ends at the final one, timed there and counted by its status.
    "after 100 Continue": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK",
    # RFC 9112 6.3: Transfer-Encoding overrides Content-Length.
    "framed both ways": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"2\r\nOK\r\n0\r\n\r\n",
}

ENDED_BY_CLOSE = {"to the end of the connection", "HTTP/1.0"}  # replies no connection outlives


@pytest.mark.parametrize("reply", sorted(ANSWERED))
@pytest.mark.parametrize("keepalive", [False, True])
def test_every_way_a_reply_can_end_is_answered(reply: str, keepalive: bool) -> None:
    kept = keepalive and reply not in ENDED_BY_CLOSE
    with serving(ANSWERED[reply], keep_alive=kept) as server:
        result = paced(server.url, *(["--keepalive"] if keepalive else []))
    report = parse_paced_output(result.stdout)
    assert result.returncode == 0 and report.completed == 50 and report.failed_requests == 0, result.stderr
    assert report.non_2xx == 0 and report.sent == 50


def test_nothing_listening_is_a_failure_naming_it() -> None:
    result = paced(f"http://127.0.0.1:{a_free_port()}/")
    assert result.returncode == 1 and parse_paced_output(result.stdout).completed == 0
    assert "0 of 50 requests completed, 50 failed: 50 could not connect to 127.0.0.1:" in one_line(result)


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ("nothing", "closed by the server before any reply"),
        ("garbage", "answered with something that is not HTTP"),
        ("cut short", "cut short within the reply"),
        ("cut before the chunked end", "cut short within the reply"),
        ("a NUL in its head", "answered with something that is not HTTP"),
        ("an empty length", "answered with something that is not HTTP"),
        ("a length past 64 bits", "answered with something that is not HTTP"),
    ],
)
def test_a_server_that_fails_every_request_is_a_failure_naming_how(reply: str, said: str) -> None:
    with serving(REPLIES[reply]) as server:
        result = paced(server.url)
    assert result.returncode == 1 and parse_paced_output(result.stdout).completed == 0, result.stdout
    assert f"0 of 50 requests completed, 50 failed: 50 {said}" in one_line(result)


@pytest.mark.parametrize("keepalive", [False, True])
def test_a_reply_read_to_the_close_but_ended_by_a_reset_is_a_failure(keepalive: bool) -> None:
    """A body that ends with the connection ends only at an orderly close: a reset (SO_LINGER 0) ends none."""
    with serving(REPLIES["to the end of the connection"], reset=True) as server:
        result = paced(server.url, *(["--keepalive"] if keepalive else []))
    report = parse_paced_output(result.stdout)
    assert result.returncode == 1 and report.completed == 0 and report.failed_requests == 50, result.stdout
    assert "0 of 50 requests completed, 50 failed" in one_line(result)


def test_a_server_that_never_answers_times_every_request_out() -> None:
    with serving(None) as server:
        result = paced(server.url, rate="20")
    assert result.returncode == 1 and parse_paced_output(result.stdout).timeouts == 20
    assert "0 of 20 requests completed, 20 failed: 20 not answered within the timeout" in one_line(result)


def test_an_ipv6_address_is_served() -> None:
    if not socket.has_ipv6:
        pytest.skip("this machine has no IPv6")
    try:
        server = serving(OK, socket.AF_INET6)
        running = server.__enter__()
    except OSError:
        pytest.skip("this machine has no IPv6 loopback")
    try:
        result = paced(running.url)
    finally:
        server.__exit__(None, None, None)
    assert result.returncode == 0 and parse_paced_output(result.stdout).completed == 50, result.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--rate", "1e-300"), "schedules 1e-300 requests: schedule from 1 to 10,000,000"),
        (("--rate", "50000", "--duration", "3600"), "schedules 1.8e+08 requests: schedule from 1 to 10,000,000"),
        (("--rate", "nan"), "argument --rate: 'nan' is not a number in (0, 60000]"),
        (("--rate", "2e6"), "argument --rate: '2e6' is not a number in (0, 60000]: benchsite-paced's proven ceiling"),
        (("--duration", "inf"), "argument --duration: 'inf' is not a number in (0, 3600]"),
        (("--timeout", "nan"), "argument --timeout: 'nan' is not a number in (0, 3600]"),
        (("--timeout", "0"), "argument --timeout: '0' is not a number in (0, 3600]"),
        (("--timeout", "-1"), "argument --timeout: '-1' is not a number in (0, 3600]"),
        (("--connections", "0"), "argument --connections: '0' is not a whole number from 1 to 20,000"),
        (("http://127.0.0.1:99999/",), "'http://127.0.0.1:99999/' has no port from 1 to 65535"),
        (("http://127.0.0.1:0/",), "has port 0, which no server listens on"),
        (("http://127.0.0.1:/",), "has an empty port"),
        (("https://127.0.0.1:8080/",), "is not an http:// URL with a host"),
        (("http://no-such-host.invalid:8080/",), "'no-such-host.invalid' cannot be resolved"),
    ],
)
def test_every_bad_argument_is_refused_in_a_line_of_its_own(args: tuple[str, ...], said: str) -> None:
    url = next((arg for arg in args if arg.startswith(("http", "https"))), "http://127.0.0.1:9/")
    options = {"--rate": "10", "--duration": "1", "--timeout": "1"}
    options.update(dict(zip(args[::2], args[1::2], strict=False)) if not args[0].startswith("http") else {})
    argv = [PROGRAM, *(part for pair in options.items() for part in pair), url]
    if "--connections" in args:
        argv[-1:-1] = ["--connections", args[args.index("--connections") + 1]]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stdout == ""
    assert said in one_line(result), result.stderr


def test_an_interrupt_ends_in_one_line() -> None:
    with serving(None) as server:
        argv = [PROGRAM, "--rate", "10", "--duration", "60", "--timeout", "60", server.url]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert server.accepted.wait(30), "benchsite-paced never connected"
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=30)
        finally:
            process.kill()
            process.wait()
    assert process.returncode == 130 and out == "" and "Traceback" not in err
    assert err.strip().startswith("benchsite-paced: interrupted after") and len(err.strip().splitlines()) == 1
    assert err.strip().endswith("of its 60 s")


def test_requests_due_faster_than_they_can_go_out_are_counted_not_queued() -> None:
    """The highest rate it takes at a server that never answers: all but the ten in flight wait, counted, so
    the tool's memory stays that of its interpreter (a queue of their due times grew by about 45 MB/s). Each
    wait is for the server, not the tool's own lag: the load is the server's, every request unanswered."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with serving(None) as server:
        result = paced(server.url, rate="60000", duration="2")
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    report = parse_paced_output(result.stdout)
    assert report.scheduled == 120_000 and report.completed == 0 and result.returncode == 1
    assert report.sent < report.scheduled and report.send_lag_us_p99 > 1000
    assert report.own_lag_us_p99 is not None and report.own_lag_us_p99 <= 1000 and not report.tool_limited
    assert report.failed_requests == report.scheduled  # never answered: timeouts, the server's
    assert peak_mib < 100 or before / 1024 >= 100, f"benchsite-paced peaked at {peak_mib:.0f} MiB"
