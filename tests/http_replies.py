"""HTTP/1.x replies for testing a reply parser: generated (hypothesis) in both framings and by the close, with
interim replies, chunk extensions and trailers, heads past 4 KiB and one of the faults a server may send, split
anywhere; and llhttp's reading of them (httptools' response parser), the reference the open-loop tool's C parser
is held to."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

import httptools
from hypothesis import strategies as st

TCHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
VISIBLE = "".join(chr(code) for code in range(0x21, 0x7F))
FRAMINGS = ("length", "chunked", "close", "length and chunked", "gzip, chunked", "chunked, gzip")
FAULTS = (
    "empty length",
    "NUL in the head",
    "bare LF",
    "length twice",
    "signed length",
    "length past 64 bits",
    "space after a chunk size",
    "no CRLF after chunk data",
    "space before a colon",
    "folded header",
    "HTTP/1.2",
    "two-digit status",
)


@dataclass
class Reply:
    """A generated reply: its bytes, where they are split, and what the generator put past its end."""

    data: bytes
    cuts: list[int]
    closed: bool
    extra: int = 0  # bytes after the final reply's end (only where framing ends it)
    fault: str | None = None

    @property
    def chunks(self) -> list[bytes]:
        points = [0, *sorted({cut for cut in self.cuts if 0 < cut < len(self.data)}), len(self.data)]
        return [self.data[a:b] for a, b in pairwise(points)]


def _chunked(body: bytes, sizes: list[int], extensions: list[str], trailers: list[tuple[str, str]]) -> bytes:
    out, at, index = b"", 0, 0
    while at < len(body):
        size = max(1, sizes[index % len(sizes)]) if sizes else len(body)
        piece = body[at : at + size]
        extension = f";{extensions[index % len(extensions)]}" if extensions and index % 2 else ""
        out += f"{len(piece):x}{extension}\r\n".encode() + piece + b"\r\n"
        at, index = at + len(piece), index + 1
    out += b"0\r\n" + b"".join(f"{name}: {value}\r\n".encode() for name, value in trailers) + b"\r\n"
    return out


@st.composite
def replies(draw: st.DrawFn) -> Reply:
    """One reply (after up to two interim ones), split at up to eight points, closed or not."""
    version = draw(st.sampled_from(["1.0", "1.1"]))
    token = st.text(TCHARS, min_size=1, max_size=12)
    value = st.text(VISIBLE + " \t", max_size=40).map(str.strip)
    head = b""
    for status in draw(st.lists(st.sampled_from([100, 102, 103]), max_size=2)):
        head += f"HTTP/{version} {status} Interim\r\nX-Interim: {draw(token)}\r\n\r\n".encode()
    status = draw(st.sampled_from([200, 201, 204, 206, 301, 304, 404, 500, 503]) | st.integers(200, 599))
    reason = draw(st.sampled_from(["", " OK", " Not Found", " x y z"]))
    headers = [(draw(token), draw(value)) for _ in range(draw(st.integers(0, 6)))]
    headers = [(name, text) for name, text in headers if name.lower() not in ("content-length", "transfer-encoding")]
    headers = [(name, text) for name, text in headers if name.lower() not in ("connection", "upgrade")]
    if draw(st.booleans()):
        headers.append(("X-Pad", "a" * draw(st.integers(3000, 9000))))  # a head past 4 KiB
    connection = draw(st.sampled_from([None, "close", "keep-alive", "Keep-Alive, foo", "foo, close", "foo"]))
    if connection is not None:
        headers.append(("Connection", connection))
    body = draw(st.binary(max_size=300))
    framing = draw(st.sampled_from(FRAMINGS))
    if framing in ("length", "length and chunked"):
        headers.append(("Content-Length", str(len(body) + (5 if framing != "length" else 0))))
    if framing != "length" and framing != "close":
        headers.append(("Transfer-Encoding", "chunked" if framing == "length and chunked" else framing))
    draw(st.randoms()).shuffle(headers)
    if framing == "length":
        payload = body
    elif framing.endswith("chunked"):
        sizes = draw(st.lists(st.integers(1, 64), max_size=5))
        extensions = draw(st.lists(st.sampled_from(["a", "name=value", "x=1"]), max_size=2))
        trailers = [(draw(token), draw(value)) for _ in range(draw(st.integers(0, 2)))]
        payload = _chunked(body, sizes, extensions, trailers)
    else:
        payload = body
    if status in (204, 304):  # no body, whatever the head says of one
        payload = b""
    fault = draw(st.none() | st.sampled_from(FAULTS))
    head += f"HTTP/{version} {status}{reason}\r\n".encode()
    final_head = len(head)  # the final reply's head starts here, after any interim ones
    head += b"".join(f"{name}: {text}\r\n".encode() for name, text in headers) + b"\r\n"
    head, payload = _with_fault(head, payload, fault, final_head - len(f"HTTP/{version} {status}{reason}\r\n"))
    ends_by_framing = framing != "close" and not framing.endswith("gzip") and status not in (204, 304)
    extra = draw(st.sampled_from([0, 0, 0, 7])) if ends_by_framing and fault is None else 0
    if ends_by_framing and payload and draw(st.booleans()):  # cut short somewhere in the body
        payload, extra = payload[: draw(st.integers(0, len(payload) - 1))], 0
    data = head + payload + b"E" * extra
    cuts = draw(st.lists(st.integers(0, len(data)), max_size=8))
    return Reply(data=data, cuts=cuts, closed=draw(st.booleans()), extra=extra, fault=fault)


def _with_fault(head: bytes, payload: bytes, fault: str | None, start: int) -> tuple[bytes, bytes]:
    """The final reply (its head from `start`) with one fault a broken or hostile server sends."""
    end_of_status = head.index(b"\r\n", start) + 2
    added = {
        "empty length": b"Content-Length:\r\nX-Next: 5\r\n",
        "NUL in the head": b"X-Nul: a\x00b\r\n",
        "bare LF": b"X-Bare: lf\n",
        "length twice": b"Content-Length: 2\r\nContent-Length: 2\r\n",
        "signed length": b"Content-Length: +2\r\n",
        "length past 64 bits": b"Content-Length: 99999999999999999999\r\n",
        "space before a colon": b"X-Space : 1\r\n",
        "folded header": b"X-Fold: a\r\n folded\r\n",
    }
    if fault in added:
        return head[:end_of_status] + added[fault] + head[end_of_status:], payload
    if fault == "HTTP/1.2":
        return head[:start] + b"HTTP/1.2" + head[start + 8 :], payload
    if fault == "two-digit status":
        return head[: start + 9] + b"20" + head[start + 12 :], payload
    if fault in ("space after a chunk size", "no CRLF after chunk data") and b"\r\n" in payload:
        size_end = payload.index(b"\r\n")
        if fault == "space after a chunk size":
            return head, payload[:size_end] + b" " + payload[size_end:]
        return head, payload[: size_end + 2] + payload[size_end + 2 :].replace(b"\r\n", b"\n", 1)
    return head, payload


@dataclass
class _Events:
    """What llhttp said while reading: each message's status and keep-alive, the final one's body and headers."""

    completed: list[tuple[int, bool, int, set[bytes]]] = field(default_factory=list)  # status, keep, body, names
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: int = 0
    in_head: bool = True
    parser: httptools.HttpResponseParser | None = None

    def on_message_begin(self) -> None:
        self.headers, self.body, self.in_head = [], 0, True

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.in_head:
            self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        self.in_head = False

    def on_body(self, body: bytes) -> None:
        self.body += len(body)

    def on_message_complete(self) -> None:
        assert self.parser is not None
        names = {name for name, _ in self.headers}
        self.completed.append((self.parser.get_status_code(), self.parser.should_keep_alive(), self.body, names))


@dataclass(frozen=True)
class Reading:
    """One parser's reading of a reply: its outcome and, where answered, the final status, keep-alive and body."""

    outcome: str  # answered, incomplete, not_http, cut_short, closed
    status: int | None = None
    keep: bool | None = None
    body_bytes: int | None = None


def llhttp_reading(reply: Reply) -> Reading:
    """llhttp's reading, strict but for RFC 9112's rule that Transfer-Encoding overrides Content-Length."""
    events = _Events()
    parser = httptools.HttpResponseParser(events)
    events.parser = parser
    parser.set_dangerous_leniencies(lenient_chunked_length=True)
    for chunk in reply.chunks:
        try:
            parser.feed_data(chunk)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade):
            if any(done[0] >= 200 for done in events.completed):  # its error is in bytes past the final reply
                break
            return Reading("not_http")
        if any(done[0] >= 200 for done in events.completed):
            break
    final = [done for done in events.completed if done[0] >= 200]
    if final:
        status, keep, body, names = final[0]
        # RFC 9112 6.3: a reply framed both ways "ought to be handled as an error": read by its
        # Transfer-Encoding (llhttp's leniency above), its connection is not reused.
        both = {b"content-length", b"transfer-encoding"} <= names
        return Reading("answered", status, keep and not both, body)
    if not reply.closed:
        return Reading("incomplete")
    # Closed: llhttp ends a body read to the close (its finish, which httptools does not offer) where its head
    # gave neither a length nor a chunked coding last.
    names = {name for name, _ in events.headers}
    chunked = any(
        name == b"transfer-encoding" and value.lower().split(b",")[-1].strip() == b"chunked"
        for name, value in events.headers
    )
    final_head = not events.in_head and parser.get_status_code() >= 200
    if final_head and b"content-length" not in names and not chunked:
        return Reading("answered", parser.get_status_code(), False, events.body)
    return Reading("cut_short" if reply.data else "closed")  # closed in its reply, or before any byte


def c_reading(got: dict) -> Reading:
    """The C parser's reading, from _pacer.frame's result."""
    if got["outcome"] != "answered":
        return Reading(got["outcome"])
    return Reading("answered", got["status"], got["keep"], got["body_bytes"])
