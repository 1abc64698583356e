"""The C loop (tools/_pacer.c) and its reading of one reply (tools/_http_reply.c), for tests of its framing."""

from collections.abc import Sequence
from typing import Any

def run(
    *,
    family: int,
    host: str,
    port: int,
    request: bytes,
    rate: float,
    count: int,
    connections: int,
    keepalive: bool,
    timeout_s: float,
) -> dict[str, Any]: ...
def frame(chunks: Sequence[bytes], keepalive: bool, closed: bool) -> dict[str, Any]: ...
