"""Originally published figures, transcribed from a seed page with their source.

data/<recipe>/published.toml names the source, the hardware and software of
the original, and for each published test the subject and cell it matches and
the file holding the original ab report verbatim; the numbers are parsed from
those reports by the same parser as today's runs, never typed by hand.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsite.ab import AbResult, parse_ab_output
from benchsite.errors import BenchError

PUBLISHED_FILE = "published.toml"
PUBLISHED_FORMAT_VERSION = 1


@dataclass(frozen=True)
class PublishedResult:
    """One test of the original page, matched to today's subject and cell.

    Where the page printed ab's report, the report is kept verbatim and parsed;
    where it printed only the requests/s, that figure is transcribed.
    """

    test: str
    subject: str
    cell: str
    command: str
    raw_output: Path | None
    result: AbResult | None
    transcribed_rps: float | None = None
    transcribed_cpu_us: float | None = None  # client CPU per request, where the page gave it

    @property
    def requests_per_s(self) -> float | None:
        if self.result is not None:
            return self.result.requests_per_s
        return self.transcribed_rps


@dataclass(frozen=True)
class Published:
    """The original page's setting and results."""

    path: Path
    source: str
    machine: dict[str, str]
    notes: str
    results: tuple[PublishedResult, ...]
    claims: tuple[dict[str, Any], ...]

    def figure(self, subject: str, cell: str) -> PublishedResult | None:
        return next((r for r in self.results if r.subject == subject and r.cell == cell), None)

    @property
    def files(self) -> list[Path]:
        """Every file the published figures were read from."""
        return [self.path, *(r.raw_output for r in self.results if r.raw_output is not None)]


def _result(table: dict[str, Any], base: Path, path: Path) -> PublishedResult:
    try:
        test, subject, cell = table["test"], table["subject"], table["cell"]
    except KeyError as error:
        raise BenchError(f"{path}: a [[results]] entry lacks {error.args[0]!r}: add it") from None
    command = table.get("command", "")
    if "raw_output" not in table:
        rps = table.get("requests_per_s")
        cpu_s = table.get("cpu_time_s_per_10000_requests")
        if not isinstance(rps, int | float) and not isinstance(cpu_s, int | float):
            raise BenchError(f"{path}: {test} needs raw_output (the ab report), requests_per_s or "
                             "cpu_time_s_per_10000_requests: add one")
        return PublishedResult(test, subject, cell, command, None, None,
                               None if rps is None else float(rps),
                               None if cpu_s is None else float(cpu_s) * 1e6 / 10000)
    raw_output = base / table["raw_output"]
    try:
        report = raw_output.read_text()
    except OSError:
        raise BenchError(f"{path}: {test} names {raw_output}, which cannot be read: fix raw_output") from None
    try:
        result = parse_ab_output(report)
    except BenchError as error:
        raise BenchError(f"{raw_output}: {error}") from None
    return PublishedResult(test, subject, cell, command, raw_output, result)


def load_published(path: Path) -> Published:
    """Read a published.toml and parse the original reports it names."""
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise BenchError(f"{path}: no such file: transcribe the original figures there") from None
    except tomllib.TOMLDecodeError as error:
        raise BenchError(f"{path}: not valid TOML ({error}): fix the file") from None
    version = data.get("format_version")
    if version != PUBLISHED_FORMAT_VERSION:
        raise BenchError(
            f"{path}: format version {version!r}, but this harness reads {PUBLISHED_FORMAT_VERSION}: "
            "update the harness or the file"
        )
    if "source" not in data:
        raise BenchError(f"{path}: no 'source': say where the figures come from")
    return Published(
        path=path,
        source=data["source"],
        machine={str(k): str(v) for k, v in data.get("machine", {}).items()},
        notes=data.get("notes", ""),
        results=tuple(_result(table, path.parent, path) for table in data.get("results", [])),
        claims=tuple(data.get("claims", [])),
    )
