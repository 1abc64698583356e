"""The load tools behind one interface: argv for a cell, report parser, stored result."""

from __future__ import annotations

from typing import Any

from benchsite import ab, wrk
from benchsite.ab import AbResult
from benchsite.clientbench import ClientResult, parse_client_output
from benchsite.errors import BenchError
from benchsite.recipe import Cell, Settings
from benchsite.wrk import WrkResult

LoadResult = AbResult | WrkResult | ClientResult

EXTERNAL_TOOLS = ("ab", "wrk")  # "client" cells run the subject itself


def cell_argv(cell: Cell, url: str, requests: int, settings: Settings) -> list[str]:
    """The bounded command line that runs one cell."""
    if cell.tool == "wrk":
        return wrk.build_argv(url=url, connections=cell.concurrency, threads=cell.threads,
                              duration_s=cell.duration_s, timeout_s=settings.socket_timeout_s,
                              wrk_path=settings.wrk_path)
    return ab.build_argv(url=url, requests=requests, concurrency=cell.concurrency, keepalive=cell.keepalive,
                         socket_timeout_s=settings.socket_timeout_s, variable_length=cell.variable_length,
                         ab_path=settings.ab_path)


def parse_report(tool: str, report: str) -> LoadResult:
    """Parse a tool's report (raises the tool's parse error, a BenchError)."""
    if tool == "wrk":
        return wrk.parse_wrk_output(report)
    if tool == "client":
        return parse_client_output(report)
    return ab.parse_ab_output(report)


def result_from_dict(data: dict[str, Any]) -> LoadResult:
    """Rebuild a stored result; results stored before the tool tag existed are ab's."""
    tool = data.get("tool", "ab")
    if tool == "wrk":
        return WrkResult.from_dict(data)
    if tool == "client":
        return ClientResult.from_dict(data)
    if tool == "ab":
        return AbResult.from_dict(data)
    raise BenchError(f"stored result of unknown tool {tool!r}: update the harness")


def tool_path(tool: str, settings: Settings) -> str:
    return settings.wrk_path if tool == "wrk" else settings.ab_path


VERSION_FLAGS = {"ab": "-V", "wrk": "--version"}
