"""Small docutils builders: tables, literal blocks, and the formats of numbers that are not metrics
(a metric formats itself: `results.metrics`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeAlias

from docutils import nodes

from benchsite.results.intervals import Interval

TableCell: TypeAlias = str | nodes.Node  # what a table cell may hold


def fmt_plain(value: float | None) -> str:
    """A number as its report printed it (ab's whole milliseconds stay whole)."""
    return "—" if value is None else f"{value:g}"


def fmt_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def fmt_keepalive(honoured: bool | None) -> str:
    return "—" if honoured is None else "honoured" if honoured else "not honoured"


def with_interval(value: float | None, interval: Interval | None, fmt: Callable[[float | None], str]) -> str:
    """1,071 [1,050–1,090]: a median and its interval, compactly (the caption gives the level)."""
    if value is None or interval is None or interval.low is None or interval.high is None:
        return fmt(value)
    return f"{fmt(value)} [{fmt(interval.low)}–{fmt(interval.high)}]"


def _entry(content: TableCell) -> nodes.entry:
    entry = nodes.entry()
    if isinstance(content, nodes.Inline):
        entry += nodes.paragraph("", "", content)
    elif isinstance(content, nodes.Node):
        entry += content
    else:
        entry += nodes.paragraph(text=content)
    return entry


def table(headers: Sequence[str], rows: Sequence[Sequence[TableCell]], classes: Sequence[str] = ()) -> nodes.table:
    """A docutils table with one header row."""
    node = nodes.table(classes=["bench-table", *classes])
    group = nodes.tgroup(cols=len(headers))
    node += group
    for _ in headers:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    header_row = nodes.row()
    for header in headers:
        header_row += _entry(header)
    head += header_row
    group += head
    body = nodes.tbody()
    for row in rows:
        row_node = nodes.row()
        for content in row:
            row_node += _entry(content)
        body += row_node
    group += body
    return node


def literal(text: str, language: str = "text") -> nodes.literal_block:
    """A literal block shown verbatim."""
    block = nodes.literal_block(text, text)
    block["language"] = language
    return block
