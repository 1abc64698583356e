"""Originally published figures and conclusions, transcribed from a seed page with their source.

data/<recipe>/published.toml names the source, the hardware and software of the original,
and for each published test the subject and cell it matches and the file holding the
original ab report verbatim (the numbers are parsed from it by the same parser as today's
runs, never typed by hand), or the one figure the page printed. Its [[claims]] are the
original conclusions as rules a new run can confirm or refute.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from benchsite.errors import BenchError
from benchsite.model.recipe import Recipe
from benchsite.model.upgrade import upgrade_published
from benchsite.records import Name, Record, Seq, Text, WebAddress, describe, read_toml
from benchsite.results.claims import AnyClaim, Claim, Verdict, decide
from benchsite.results.machines import ClaimAcross, MachineRuns, across_machines
from benchsite.results.originals import OriginalFigures, PublishedEntry, PublishedResult
from benchsite.results.view import RunView
from benchsite.tools.ab import parse_ab_output

PUBLISHED_FILE = "published.toml"


_CLAIM: TypeAdapter[AnyClaim] = TypeAdapter(Claim)


def parse_claim(data: object, source: Path | str) -> AnyClaim:
    """One [[claims]] table as its record; a problem is a BenchError naming source and key."""
    try:
        return _CLAIM.validate_python(data)
    except ValidationError as error:
        raise BenchError(describe(error, PublishedFile, f"{source}: claims")) from None


class PublishedFile(Record):
    """data/<recipe>/published.toml."""

    format_version: Literal[2]
    source: Text
    # Where the original page can be read (checked against the seed's text), and the link's text.
    source_url: WebAddress | None = None
    source_url_note: str = ""
    notes: str = ""
    machine: dict[str, str] = Field(default_factory=dict)
    results: Seq[PublishedEntry] = ()
    claims: Seq[Claim] = ()
    # The machine (name or id) whose latest run the page's main results show; none: the one with most runs.
    reference_machine: Name | None = None

    @model_validator(mode="after")
    def _unique_claims(self) -> PublishedFile:
        ids = [claim.id for claim in self.claims]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"claim ids repeat ({', '.join(repeated)}): make each unique")
        return self


@dataclass(frozen=True)
class Published(OriginalFigures):
    """The original page's setting, results and conclusions."""

    path: Path
    source: str
    machine: dict[str, str]
    notes: str
    claims: tuple[AnyClaim, ...]
    reference_machine: str | None = None
    source_url: str | None = None
    source_url_note: str = ""

    def for_copies(self, copies: dict[str, dict[str, str]]) -> Published:
        """Every claim once per copy of its subjects (a release sweep): {suffix: {subject: its copy}}; a claim
        about a subject the sweep does not copy is left out (a sweep of the server alone has no framework)."""
        claims = tuple(
            claim.with_subjects(names, suffix) for suffix, names in copies.items() for claim in self.about(names.keys())
        )
        return replace(self, claims=claims)

    def about(self, subjects: Iterable[str]) -> list[AnyClaim]:
        """The claims that name only these subjects."""
        known = set(subjects)
        return [claim for claim in self.claims if claim.subjects_named() <= known]

    def verdicts(self, view: RunView) -> list[Verdict]:
        """Every claim decided on one run, the published value beside each."""
        return [decide(claim, view, self) for claim in self.claims]

    def across(self, groups: list[MachineRuns]) -> list[ClaimAcross]:
        """Every claim decided on each machine's pooled runs, and over all machines."""
        return across_machines(groups, self.claims, self)

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
    data = PublishedFile.from_json(upgrade_published(read_toml(path), path), path)
    return Published(
        path=path,
        source=data.source,
        machine=data.machine,
        notes=data.notes,
        results=tuple(_parsed(entry, path.parent, path) for entry in data.results),
        claims=data.claims,
        reference_machine=data.reference_machine,
        source_url=data.source_url,
        source_url_note=data.source_url_note,
    )


def published_claims(recipe: Recipe, data_dir: Path) -> Published | None:
    """Before measuring: the recipe's published.toml (if any), valid and naming only what the recipe has."""
    path = data_dir / recipe.name / PUBLISHED_FILE
    if not path.is_file():
        return None
    published = load_published(path)
    published.check_names({s.name for s in recipe.subjects}, {c.name for c in recipe.cells})
    return published
