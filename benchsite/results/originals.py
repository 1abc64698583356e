"""The original pages' own figures: each published test matched to a subject and cell, with its numbers.

Where the original printed its ab report, the figures are parsed from that report verbatim by the
same parser as today's runs; never typed by hand. Claims read these to show the published value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field, model_validator

from benchsite.records import InnerPath, Name, Record, Text
from benchsite.tools.ab import AbResult


class PublishedEntry(Record):
    """One test of the original page, matched to today's subject and cell."""

    test: Text
    subject: Name
    cell: Name
    command: str = ""
    raw_output: InnerPath | None = None  # the ab report, verbatim, relative to published.toml
    requests_per_s: Annotated[float, Field(ge=0, le=1e9)] | None = None  # where only this was printed
    cpu_time_s_per_10000_requests: Annotated[float, Field(ge=0, le=1e6)] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> PublishedEntry:
        if self.raw_output is None and self.requests_per_s is None and self.cpu_time_s_per_10000_requests is None:
            raise ValueError(
                f"{self.test} needs raw_output (the ab report), requests_per_s or cpu_time_s_per_10000_requests"
            )
        return self


@dataclass(frozen=True)
class PublishedResult:
    """One published test with its figures: all of ab's where its report was printed."""

    entry: PublishedEntry
    raw_output: Path | None
    result: AbResult | None

    @property
    def test(self) -> str:
        return self.entry.test

    @property
    def subject(self) -> str:
        return self.entry.subject

    @property
    def cell(self) -> str:
        return self.entry.cell

    @property
    def command(self) -> str:
        return self.entry.command

    @property
    def requests_per_s(self) -> float | None:
        return self.result.requests_per_s if self.result is not None else self.entry.requests_per_s

    @property
    def cpu_us_per_request(self) -> float | None:
        cpu_s = self.entry.cpu_time_s_per_10000_requests
        return None if cpu_s is None else cpu_s * 1e6 / 10000


@dataclass(frozen=True)
class OriginalFigures:
    """Every published test of an original page with its figures."""

    results: tuple[PublishedResult, ...]

    def figure(self, subject: str, cell: str) -> PublishedResult | None:
        return next((r for r in self.results if r.subject == subject and r.cell == cell), None)
