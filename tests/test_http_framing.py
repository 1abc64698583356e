"""The open-loop tool's C reply parser (tools/_http_reply.c) read against llhttp, a parser this project did not
write: generated replies in every framing, interim replies, chunk extensions, heads past 4 KiB and faults, split
anywhere; then the cases of the faults round, through the real program over real sockets."""

from __future__ import annotations

import os

from http_replies import Reply, c_reading, llhttp_reading, replies
from hypothesis import HealthCheck, given, settings

from benchsite.tools import _pacer

# The suite reads a few thousand; BENCHSITE_FRAMING_EXAMPLES=100000 reads as many as the closing note quotes.
EXAMPLES = int(os.environ.get("BENCHSITE_FRAMING_EXAMPLES", "3000"))


def c_frame(reply: Reply) -> dict:
    return _pacer.frame(reply.chunks, keepalive=True, closed=reply.closed)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(replies())
def test_the_c_parser_reads_every_generated_reply_as_llhttp_does(reply: Reply) -> None:
    got = c_frame(reply)
    assert c_reading(got) == llhttp_reading(reply), (reply.fault, reply.data[:400], reply.chunks[:3])
    if got["outcome"] == "answered" and reply.fault is None and not reply.closed:
        assert got["rest"] == reply.extra  # what follows a reply's end is not its own
