"""The bounded command line that runs one load cell with its tool."""

from __future__ import annotations

from benchsite.model.recipe import AbLoad, Settings, WrkLoad
from benchsite.tools import ab, wrk


def load_argv(load: AbLoad | WrkLoad, url: str, requests: int, settings: Settings) -> list[str]:
    """ab bounded by -n and -s, or wrk bounded by -d and --timeout."""
    if isinstance(load, WrkLoad):
        return wrk.build_argv(
            url=url,
            connections=load.connections,
            threads=load.threads,
            duration_s=load.duration_s,
            timeout_s=settings.socket_timeout_s,
            wrk_path=settings.wrk_path,
        )
    return ab.build_argv(
        url=url,
        requests=requests,
        concurrency=load.concurrency,
        keepalive=load.keepalive,
        socket_timeout_s=settings.socket_timeout_s,
        variable_length=load.variable_length,
        ab_path=settings.ab_path,
    )


def tool_path(tool: str, settings: Settings) -> str:
    return settings.wrk_path if tool == "wrk" else settings.ab_path
