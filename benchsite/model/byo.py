"""Subjects built from source by `invoke byo`: what conf/byo.toml says and what a build records.

conf/byo.toml names each system the package registries cannot give us, how it builds and what it
provides (Python modules, programs). Each build writes build/byo/NAME/build.json: where its source
came from, which of the project's patches it applied, and a checksum of every file it provides,
so that a run can tell which build it measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from benchsite.records import InnerPath, Name, Record, Seq, Text, read_toml

BYO_CONF = "byo.toml"
BUILD_RECORD = "build.json"
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class Sdist(Record):
    """A source archive from a package registry, fetched and checked by its digest."""

    url: Annotated[str, StringConstraints(pattern=r"^https://")]
    sha256: Sha256


class Provides(Record):
    """What a build makes available to the recipes."""

    modules: Seq[Text] = ()
    programs: Seq[Text] = ()


class ByoSystem(Record):
    """One [NAME] table of conf/byo.toml."""

    kind: Literal["python", "autotools"]
    summary: Text
    sdist: Sdist | None = None  # built from this archive unless the user brings a source folder
    upstream: Text | None = None  # the repository a user clones to bring the source
    fits: Text | None = None  # the upstream commit the patches were made for (a checkout of it builds)
    patches: Seq[InnerPath] = ()  # in conf/byo/, applied with patch -p1 in this order
    apt: Seq[Text] = ()  # Debian packages the build needs
    configure: Seq[str] = ()  # autotools: extra ./configure options
    make: Seq[Seq[str]] = ((),)  # autotools: the make commands' arguments, in order (default: the whole tree)
    install: Seq[Seq[str]] = (("install",),)  # autotools: the arguments of make that install it
    pybind11: Text | None = None  # python: pybind11 version whose headers replace a bundled copy
    provides: Provides


class ByoConf(Record):
    """conf/byo.toml: the systems `invoke byo` can build."""

    systems: dict[Name, ByoSystem] = Field(min_length=1)


def load_byo_conf(conf_dir: Path) -> ByoConf:
    """conf/byo.toml, validated."""
    path = conf_dir / BYO_CONF
    return ByoConf.from_json({"systems": read_toml(path)}, path)


class ProvidedFile(Record):
    """A file a build provides (a module's shared object, a program), by its checksum."""

    provides: Text  # the module or program name
    path: str  # portable: {site_packages}/..., {repo}/build/byo/...
    sha256: Sha256


class ByoBuild(Record):
    """build/byo/NAME/build.json: one build of one system."""

    name: Name
    summary: Text
    source: Text  # the archive and its digest, or the checkout and its commit
    patches: dict[str, Sha256]  # patch file -> its digest, in the order applied
    built_at: Text
    builder: Text  # the project's commit that built it
    commands: Seq[Seq[str]]  # the build commands, portable
    files: Seq[ProvidedFile]
