"""Variants: what differs from the checkout when a recipe's subjects are measured several ways in one run. An
A/B run (`invoke versus`) has two, a release sweep one per release; both are recorded in run.json the same way.

A variant is one of:

- ``checkout``: the recipe's subjects as this checkout has them;
- ``dir:PATH``: the recipe's source files found in folder PATH (a patched ``framework_app.py``) in place of
  the checkout's;
- ``rev:REV``: the recipe's source files as git revision REV of this checkout has them;
- ``NAME==VERSION`` (several joined by commas: ``CherryPy==17.4.2,cheroot==6.5.0``): the subjects that run
  those distributions, on those versions, everything else as the checkout has it;
- ``release:VERSION``: a release of the recipe's swept package in the environment of its time (its
  dependencies resolved as of its upload date), as a release sweep runs it;
- ``opt:--FLAG=VALUE``: every subject whose command line has the option --FLAG, with VALUE instead;
- ``NAME@git:REPO#REV`` or ``NAME@dir:PATH``: distribution NAME built from its own source (a git repository, a URL
  or a local clone, at revision REV; or a source folder), everything else as the checkout has it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from benchsite.errors import BenchError
from benchsite.records import Name, Record, Seq, Text

Kind = Literal["checkout", "dir", "rev", "pins", "release", "opt", "source"]
SIDES = ("a", "b")  # the variants of an A/B run, in order
VARIANTS_DIR = Path(__file__).resolve().parents[2] / "build" / "variants"  # the sides' files; ignored by git

_PREFIXED: tuple[Kind, ...] = ("dir", "rev", "release", "opt")
_OPTION = re.compile(r"^(--?[A-Za-z0-9][A-Za-z0-9_.-]*)=(.*)$")
_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+!-]*$")
_DISTRIBUTION = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_REVISION = re.compile(r"^[A-Za-z0-9_./~^@{}-]+$")
_SOURCE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)@(git|dir):(.+)$")
_FORMS = (
    "checkout, dir:PATH, rev:REV, NAME==VERSION[,NAME==VERSION], release:VERSION, opt:--FLAG=VALUE, "
    "NAME@git:REPO#REV or NAME@dir:PATH"
)


def canonical(distribution: str) -> str:
    """A distribution's name as package indexes compare it (PEP 503): Zope.Interface -> zope-interface."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


@dataclass(frozen=True)
class Variant:
    """One variant, as the user gave it."""

    kind: Kind
    value: str = ""  # the folder, revision, release, "--flag=value" or "NAME==VERSION,..."

    @property
    def spec(self) -> str:
        """As the user writes it."""
        if self.kind == "checkout":
            return "checkout"
        return self.value if self.kind in ("pins", "source") else f"{self.kind}:{self.value}"

    @property
    def shown(self) -> str:
        """As labels and pages show it: a folder by its name alone (no machine's path in data/)."""
        if self.kind == "source":
            return self.source.shown
        return f"dir:{Path(self.value).name}" if self.kind == "dir" else self.spec

    @property
    def source(self) -> Source:
        """cheroot@git:/src/cheroot#v8.0.0 -> Source("cheroot", "git", "/src/cheroot", "v8.0.0")."""
        assert self.kind == "source"
        return source_of(self.value)

    @property
    def option(self) -> tuple[str, str]:
        """opt:--threads=4 -> ("--threads", "4")."""
        found = _OPTION.match(self.value)
        assert found is not None and self.kind == "opt"
        return found.group(1), found.group(2)

    @property
    def pins(self) -> dict[str, str]:
        """CherryPy==17.4.2,cheroot==6.5.0 -> {"CherryPy": "17.4.2", "cheroot": "6.5.0"}."""
        assert self.kind == "pins"
        return dict(pin.split("==", 1) for pin in self.value.split(","))


def parse_variant(given: str, side: str) -> Variant:
    """A variant's specification, checked for form (whether its folder, revision or versions exist is checked
    when the run is prepared); a malformed one is a one-line error naming the forms."""
    text = given.strip()
    if not text:
        raise BenchError(f"no side {side.upper()}: give -{side} as {_FORMS}")
    if text == "checkout":
        return Variant("checkout")
    if _SOURCE.match(text):
        return Variant("source", _source(text, given, side))
    kind, colon, value = text.partition(":")
    if "==" in text and not (colon and kind in _PREFIXED):
        return Variant("pins", _pins(text, given, side))
    if not colon or kind not in _PREFIXED or not value:
        raise BenchError(f"-{side} {given!r} is not a variant: give {_FORMS}")
    if kind == "opt" and not _OPTION.match(value):
        raise BenchError(f"-{side} {given!r}: give the option with its new value, as opt:--threads=4")
    if kind == "release" and "==" in value:
        value = _pins(value, given, side)  # a release of any distribution, in the environment of its time
    elif kind == "release" and not _VERSION.match(value):
        raise BenchError(f"-{side} {given!r}: {value!r} is not a release number: give one as 18.10.0")
    if kind == "rev" and (not _REVISION.match(value) or value.startswith("-")):
        raise BenchError(f"-{side} {given!r}: {value!r} is not a git revision: give a commit, tag or branch")
    if kind == "dir":
        folder = Path(value).expanduser()
        if not folder.is_dir():
            raise BenchError(f"-{side} {given!r}: no folder {value}: give the folder that holds the changed files")
        value = str(folder.resolve())
    return Variant(kind, value)


@dataclass(frozen=True)
class Source:
    """A distribution built from its own source: a git repository at a revision, or a folder."""

    distribution: str
    how: Literal["git", "dir"]
    where: str  # a URL, or a local folder (absolute)
    revision: str = ""  # git only

    @property
    def is_url(self) -> bool:
        return "://" in self.where or (":" in self.where and not self.where.startswith("/"))

    @property
    def shown(self) -> str:
        """As pages show it: a URL as given, a local folder by its name alone (no machine's path in data/)."""
        where = self.where if self.is_url else Path(self.where).name
        if self.how == "dir":
            return f"{self.distribution}@dir:{where}"
        revision = self.revision[:10] if re.fullmatch(r"[0-9a-f]{40}", self.revision) else self.revision
        return f"{self.distribution}@git:{where}#{revision}"


def source_of(value: str) -> Source:
    """A checked source variant's value, read back."""
    found = _SOURCE.match(value)
    assert found is not None
    name, how, rest = found.groups()
    if how == "dir":
        return Source(name, "dir", rest)
    where, _, revision = rest.rpartition("#")
    return Source(name, "git", where, revision)


def _source(text: str, given: str, side: str) -> str:
    """NAME@git:REPO#REV or NAME@dir:PATH, checked for form; a local repository or folder made absolute."""
    source = source_of(text)
    if source.how == "git":
        if not source.where or not source.revision:
            raise BenchError(f"-{side} {given!r}: give the repository and the revision, as cheroot@git:PATH#v8.0.0")
        if not _REVISION.match(source.revision) or source.revision.startswith("-"):
            raise BenchError(f"-{side} {given!r}: {source.revision!r} is not a git revision: give a commit or tag")
    if source.is_url:
        return text
    folder = Path(source.where).expanduser()
    if not folder.is_dir():
        what = "repository" if source.how == "git" else "source folder"
        raise BenchError(f"-{side} {given!r}: no folder {source.where}: give the {what} of {source.distribution}")
    rest = f"{folder.resolve()}#{source.revision}" if source.how == "git" else str(folder.resolve())
    return f"{source.distribution}@{source.how}:{rest}"


def _pins(text: str, given: str, side: str) -> str:
    """NAME==VERSION[,NAME==VERSION...], each checked, one per distribution, in the order given."""
    pins: dict[str, str] = {}
    for part in text.split(","):
        name, equals, version = (item.strip() for item in part.partition("=="))
        if not equals or not _DISTRIBUTION.match(name) or not _VERSION.match(version):
            raise BenchError(
                f"-{side} {given!r}: {part.strip()!r} is not a pin: give NAME==VERSION, several joined by commas "
                "(CherryPy==17.4.2,cheroot==6.5.0)"
            )
        if canonical(name) in map(canonical, pins):
            raise BenchError(f"-{side} {given!r}: {name} is pinned twice: give one version of it")
        pins[name] = version
    return ",".join(f"{name}=={version}" for name, version in pins.items())


class SourceCommit(Record):
    """A commit of a source repository, as a variant's record keeps it."""

    id: Text  # the full commit id
    date: Text  # its committer date (ISO 8601)
    subject: Text  # its message's first line


class SourceRecord(Record):
    """What a source variant ran: the distribution, where it came from, what was built, and the build's end."""

    distribution: Text
    repository: Text  # as shown: a URL, or a local folder's name
    commit: SourceCommit | None  # None: a source folder
    version: Text  # the version its packaging gave the build
    wheel: Text  # the wheel's file name
    wheel_sha256: Text
    built_in_s: float
    tools_as_of: str | None = None  # its build tools as of this moment (its commit's day); None: today's
    log: Seq[str]  # the build's last lines, paths reduced to their last part


class VariantRecord(Record):
    """One variant of a run, as run.json records it: what it is, which copy of each subject ran it, and what it
    ran (its environment's every distribution, or the digest of every file it changed)."""

    name: Name  # its part of its copies' names: "a", "b", a release's "3_2_4"
    kind: Kind
    spec: Text  # as shown: "cheroot==8.0.0", "dir:patched", "release:17.4.2"
    copies: dict[Name, Name]  # subject -> its copy that ran this variant
    installed: Seq[str] = ()  # NAME==VERSION of every distribution in its environment (a package variant's)
    resolved_as_of: str | None = None  # dependencies resolved no newer than this upload time (a release's)
    files: dict[str, str] = Field(default_factory=dict)  # file run from a copy -> sha256 (dir:, rev:, checkout by them)
    # NAME@git:... or NAME@dir:...: what was built, from which commit (left out of run.json where there is none)
    source: SourceRecord | None = Field(default=None, exclude_if=lambda value: value is None)

    def version_of(self, distribution: str) -> str | None:
        """The version of a distribution its environment installed (None: not one of a package variant's)."""
        wanted = canonical(distribution)
        for line in self.installed:
            name, _, version = line.partition("==")
            if canonical(name) == wanted:
                return version
        return None


class VariantSet(Record):
    """A run's variants: an A/B run's two sides, or a release sweep's releases of one package; its reference is
    the variant every other is compared with (side a; the newest release)."""

    reference: Name
    package: str | None = None  # a sweep's package (None: an A/B run)
    variants: Seq[VariantRecord]

    @model_validator(mode="after")
    def _reference_is_one_of_them(self) -> VariantSet:
        if self.reference not in {variant.name for variant in self.variants}:
            raise ValueError(f"reference {self.reference!r} is none of the variants")
        return self

    @property
    def sweep(self) -> bool:
        """A release sweep (its releases of one package), not an A/B run."""
        return self.package is not None

    @property
    def referenced(self) -> VariantRecord:
        """The variant every other is compared with."""
        return next(variant for variant in self.variants if variant.name == self.reference)

    @property
    def others(self) -> tuple[VariantRecord, ...]:
        """Every variant compared with the reference, in order."""
        return tuple(variant for variant in self.variants if variant.name != self.reference)

    def comparison_sets(self) -> tuple[tuple[tuple[VariantRecord, VariantRecord], ...], ...]:
        """Its comparisons, each (variant, the one it is compared with), in the sets whose intervals hold together:
        every other variant against the reference (an A/B run's B against A; a sweep's releases against the
        newest), then, in a sweep, each release against the one before it."""
        against_reference = tuple((other, self.referenced) for other in self.others)
        if not self.sweep:
            return (against_reference,)
        return against_reference, tuple((later, earlier) for earlier, later in pairwise(self.variants))

    def copy_of(self, subject: str, variant: str) -> str | None:
        found = next((v for v in self.variants if v.name == variant), None)
        return found.copies.get(subject) if found else None

    @property
    def subjects(self) -> tuple[str, ...]:
        """The subjects every variant ran a copy of, in the order of the first variant's copies."""
        first, *others = self.variants
        return tuple(s for s in first.copies if all(s in other.copies for other in others))

    def variant_of(self, copy: str) -> tuple[VariantRecord, str] | None:
        """The variant and the subject a copy ran (None: not a copy)."""
        for variant in self.variants:
            for subject, name in variant.copies.items():
                if name == copy:
                    return variant, subject
        return None


def copy_name(subject: str, variant: str) -> str:
    """The name of a subject's copy for one variant: framework-a, raw-wsgi-3_2_4."""
    return f"{subject}-{variant}"
