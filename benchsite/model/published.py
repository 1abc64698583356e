"""Originally published figures and conclusions, transcribed from a seed page with their source.

data/<recipe>/published.toml names the source, the hardware and software of the original,
and for each published test the subject and cell it matches and the file holding the
original ab report verbatim (the numbers are parsed from it by the same parser as today's
runs, never typed by hand), or the one figure the page printed. Its [[claims]] are the
original conclusions as rules a new run can confirm or refute.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Discriminator, Field, TypeAdapter, ValidationError, model_validator

from benchsite.errors import BenchError
from benchsite.model.base import InnerPath, Pair, Record, Seq, describe, read_toml
from benchsite.model.recipe import Name, Recipe, Text
from benchsite.tools.ab import AbResult, parse_ab_output

PUBLISHED_FILE = "published.toml"
PUBLISHED_FORMAT_VERSION = 1
Bound = Annotated[float, Field(gt=0, le=1e6)]


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


class ClaimBase(Record):
    """One conclusion of the original page."""

    id: Name
    text: Text

    def subjects_named(self) -> set[str]:
        raise NotImplementedError

    def cells_named(self) -> set[str]:
        raise NotImplementedError


class RatioClaim(ClaimBase):
    """A ratio of medians between two (subject, cell) figures lies within bounds."""

    kind: Literal["ratio"] = "ratio"
    numerator: Pair[Name, Name]
    denominator: Pair[Name, Name]
    at_least: Bound | None = None
    at_most: Bound | None = None
    metric: Literal["rps", "cpu"] = "rps"  # cpu: the client's CPU µs per request

    @model_validator(mode="after")
    def _bounded(self) -> RatioClaim:
        if self.at_least is None and self.at_most is None:
            raise ValueError(f"claim {self.id!r} needs at_least or at_most")
        if self.at_least is not None and self.at_most is not None and self.at_least > self.at_most:
            raise ValueError(f"claim {self.id!r}: at_least {self.at_least:g} is above at_most {self.at_most:g}")
        return self

    @property
    def rule(self) -> str:
        unit = "req/s" if self.metric == "rps" else "CPU µs/req"
        ratio = f"{unit} {'/'.join(self.numerator)} ÷ {'/'.join(self.denominator)}"
        bounds = [f"≥ {self.at_least:g}"] if self.at_least is not None else []
        bounds += [f"≤ {self.at_most:g}"] if self.at_most is not None else []
        return f"{ratio} {' and '.join(bounds)}"

    def subjects_named(self) -> set[str]:
        return {self.numerator[0], self.denominator[0]}

    def cells_named(self) -> set[str]:
        return {self.numerator[1], self.denominator[1]}


class KeepaliveClaim(ClaimBase):
    """Whether a subject kept connections alive for ab -k."""

    kind: Literal["keepalive"] = "keepalive"
    subject: Name
    cell: Name
    honoured: bool

    @property
    def rule(self) -> str:
        return f"{self.subject} {self.cell}: keep-alive {'honoured' if self.honoured else 'not honoured'}"

    def subjects_named(self) -> set[str]:
        return {self.subject}

    def cells_named(self) -> set[str]:
        return {self.cell}


class FastestClaim(ClaimBase):
    """A subject had the highest requests/s in every one of the cells."""

    kind: Literal["fastest"] = "fastest"
    subject: Name
    cells: Seq[Name] = Field(min_length=1)
    among: Seq[Name] = ()  # the competitors; empty: every subject

    @property
    def rule(self) -> str:
        among = f" among {', '.join(self.among)}" if self.among else ""
        return f"{self.subject}: highest req/s{among} at {', '.join(self.cells)}"

    def subjects_named(self) -> set[str]:
        return {self.subject, *self.among}

    def cells_named(self) -> set[str]:
        return set(self.cells)


Claim = Annotated[RatioClaim | KeepaliveClaim | FastestClaim, Discriminator("kind")]
AnyClaim = RatioClaim | KeepaliveClaim | FastestClaim
_CLAIM = TypeAdapter(Claim)


def parse_claim(data: object, source: Path | str) -> AnyClaim:
    """One [[claims]] table as its record; a problem is a BenchError naming source and key."""
    try:
        return _CLAIM.validate_python(data)
    except ValidationError as error:
        raise BenchError(describe(error, PublishedFile, f"{source}: claims")) from None


class PublishedFile(Record):
    """data/<recipe>/published.toml."""

    format_version: Literal[1]
    source: Text
    notes: str = ""
    machine: dict[str, str] = Field(default_factory=dict)
    results: Seq[PublishedEntry] = ()
    claims: Seq[Claim] = ()

    @model_validator(mode="after")
    def _unique_claims(self) -> PublishedFile:
        ids = [claim.id for claim in self.claims]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"claim ids repeat ({', '.join(repeated)}): make each unique")
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
class Published:
    """The original page's setting, results and conclusions."""

    path: Path
    source: str
    machine: dict[str, str]
    notes: str
    results: tuple[PublishedResult, ...]
    claims: tuple[AnyClaim, ...]

    def figure(self, subject: str, cell: str) -> PublishedResult | None:
        return next((r for r in self.results if r.subject == subject and r.cell == cell), None)

    @property
    def files(self) -> list[Path]:
        """Every file the published figures were read from."""
        return [self.path, *(r.raw_output for r in self.results if r.raw_output is not None)]

    def check_names(self, subjects: set[str], cells: set[str]) -> None:
        """Every claim and result names a subject and cell the recipe declares; else a BenchError naming both."""
        for where, named_subjects, named_cells in (
            *((f"claim {c.id!r}", c.subjects_named(), c.cells_named()) for c in self.claims),
            *((f"result {r.test!r}", {r.subject}, {r.cell}) for r in self.results),
        ):
            for kind, named, known in (("subject", named_subjects, subjects), ("cell", named_cells, cells)):
                unknown = sorted(named - known)
                if unknown:
                    raise BenchError(
                        f"{self.path}: {where} names unknown {kind} {', '.join(unknown)}: "
                        f"I know about {', '.join(sorted(known))}"
                    )


def _parsed(entry: PublishedEntry, base: Path, path: Path) -> PublishedResult:
    if entry.raw_output is None:
        return PublishedResult(entry, None, None)
    raw_output = base / entry.raw_output
    if not raw_output.resolve().is_relative_to(base.resolve()):
        raise BenchError(f"{path}: {entry.test}: raw_output {entry.raw_output!r} points outside {base}: fix it")
    try:
        report = raw_output.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise BenchError(
            f"{path}: {entry.test} names {raw_output}, which cannot be read as text: fix raw_output"
        ) from None
    try:
        result = parse_ab_output(report)
    except BenchError as error:
        raise BenchError(f"{raw_output}: {error}") from None
    return PublishedResult(entry, raw_output, result)


def load_published(path: Path) -> Published:
    """Read a published.toml and parse the original reports it names."""
    if not path.is_file():
        raise BenchError(f"{path}: no such file: transcribe the original figures there")
    data = PublishedFile.from_json(read_toml(path), path)
    return Published(
        path=path,
        source=data.source,
        machine=data.machine,
        notes=data.notes,
        results=tuple(_parsed(entry, path.parent, path) for entry in data.results),
        claims=data.claims,
    )


def published_claims(recipe: Recipe, data_dir: Path) -> Published | None:
    """Before measuring: the recipe's published.toml (if any), valid and naming only what the recipe has."""
    path = data_dir / recipe.name / PUBLISHED_FILE
    if not path.is_file():
        return None
    published = load_published(path)
    published.check_names({s.name for s in recipe.subjects}, {c.name for c in recipe.loads})
    return published
