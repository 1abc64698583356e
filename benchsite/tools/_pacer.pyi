"""The C loop's one function (tools/_pacer.c)."""

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
