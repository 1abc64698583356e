"""The two sides of an A/B run (`invoke versus`): what a variant specification says, checked before anything
runs.

A side is one of:

- ``checkout``: the recipe's subjects as this checkout has them;
- ``dir:PATH``: the recipe's source files found in folder PATH (a patched ``framework_app.py``) in place of
  the checkout's;
- ``rev:REV``: the recipe's source files as git revision REV of this checkout has them;
- ``release:VERSION`` (or ``PACKAGE==VERSION``): the subjects of the recipe's [sweep] on that release of its
  package, in the sweep's environment for it;
- ``opt:--FLAG=VALUE``: every subject whose command line has the option --FLAG, with VALUE instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from benchsite.errors import BenchError

Kind = Literal["checkout", "dir", "rev", "release", "opt"]
KINDS: tuple[Kind, ...] = ("checkout", "dir", "rev", "release", "opt")
SIDES = ("a", "b")  # the copies of a subject: NAME-a and NAME-b
VARIANTS_DIR = Path(__file__).resolve().parents[2] / "build" / "variants"  # the sides' files; ignored by git

_OPTION = re.compile(r"^(--?[A-Za-z0-9][A-Za-z0-9_.-]*)=(.*)$")
_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+!-]*$")
_REVISION = re.compile(r"^[A-Za-z0-9_./~^@{}-]+$")
_FORMS = "checkout, dir:PATH, rev:REV, release:VERSION (or PACKAGE==VERSION) or opt:--FLAG=VALUE"


@dataclass(frozen=True)
class Variant:
    """One side of an A/B run, as the user gave it."""

    kind: Kind
    value: str = ""  # the folder, revision, release or "--flag=value"

    @property
    def spec(self) -> str:
        """As the user writes it, and as labels and pages show it."""
        return self.kind if self.kind == "checkout" else f"{self.kind}:{self.value}"

    @property
    def shown(self) -> str:
        """As labels and pages show it: a folder by its name alone (no machine's path in data/)."""
        return f"dir:{Path(self.value).name}" if self.kind == "dir" else self.spec

    @property
    def option(self) -> tuple[str, str]:
        """opt:--threads=4 -> ("--threads", "4")."""
        found = _OPTION.match(self.value)
        assert found is not None and self.kind == "opt"
        return found.group(1), found.group(2)


def parse_variant(given: str, side: str, package: str | None = None) -> Variant:
    """A side's specification, checked for form (whether its folder, revision or release exists is checked
    when the run is prepared); a malformed one is a one-line error naming the forms."""
    text = given.strip()
    if text == "checkout":
        return Variant("checkout")
    if "==" in text and ":" not in text:
        name, _, version = text.partition("==")
        if package is not None and name.lower() != package.lower():
            raise BenchError(
                f"-{side} {given!r}: this recipe's sweep is of {package}, not {name}: give {package}=={version}"
            )
        text = f"release:{version}"
    kind, colon, value = text.partition(":")
    if not colon or kind not in KINDS or kind == "checkout" or not value:
        raise BenchError(f"-{side} {given!r} is not a variant: give {_FORMS}")
    if kind == "opt" and not _OPTION.match(value):
        raise BenchError(f"-{side} {given!r}: give the option with its new value, as opt:--threads=4")
    if kind == "release" and not _VERSION.match(value):
        raise BenchError(f"-{side} {given!r}: {value!r} is not a release number: give one as 18.10.0")
    if kind == "rev" and (not _REVISION.match(value) or value.startswith("-")):
        raise BenchError(f"-{side} {given!r}: {value!r} is not a git revision: give a commit, tag or branch")
    if kind == "dir":
        folder = Path(value).expanduser()
        if not folder.is_dir():
            raise BenchError(f"-{side} {given!r}: no folder {value}: give the folder that holds the changed files")
        value = str(folder.resolve())
    return Variant(kind, value)


def paired_name(subject: str, side: str) -> str:
    """The name of a subject's copy on one side: framework-a, framework-b."""
    return f"{subject}-{side}"
