"""What a recipe declares: its subjects (by role) and its cells (by load tool); with its conf, a Recipe.

recipes/<name>/recipe.toml says what to compare; conf/<name>.toml says how hard and where
(profiles, CPU pinning, timeouts). Both are read through strict schemas: an unknown key, a
wrong type or a number out of range is a one-line error naming the file and the key.
"""

from __future__ import annotations

import dataclasses
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from benchsite.errors import BenchError
from benchsite.model.conf import ConfFile, Profile, Settings, Sweep
from benchsite.model.counting import FlamePlan
from benchsite.model.variant import VariantSet
from benchsite.records import InnerPath, Line, Name, Record, Seq, UrlPath, read_toml
from benchsite.tools import AnyCell, Cell
from benchsite.tools.ab import AbCell

RECIPE_FILE = "recipe.toml"


class Expectation(Record):
    """What a correct response from a subject looks like, checked before any load."""

    status: int = Field(default=200, ge=100, le=599)
    body: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)

    @property
    def body_bytes(self) -> bytes | None:
        return None if self.body is None else self.body.encode()


class Template(Record):
    """A configuration template in the recipe folder, filled per run into the subject's work folder."""

    source: InnerPath
    target: InnerPath


class SubjectBase(Record):
    """What every kind of subject declares: how to start it and when it can run."""

    name: Name
    label: Line
    argv: Seq[str] = Field(min_length=1)
    source_files: Seq[InnerPath] = ()
    requires: Seq[str] = ()  # modules that must import, else the subject is skipped
    # The distributions it runs (a NAME==VERSION variant finds the subjects it changes by them, and everything
    # they need); empty: those that provide its `requires` and the recipe's common_packages (without requires:
    # the common ones, else every one of the recipe's packages).
    packages: Seq[str] = ()
    requires_programs: Seq[str] = ()  # programs that must exist ({bin}: the venv's bin), likewise
    skip_reason: str = ""  # why they may be missing, shown on the page
    templates: Seq[Template] = ()
    prepare: Seq[str] = ()  # a command run to completion before the subject starts (makes its files)
    cells: Seq[Name] = ()  # run only these cells (empty: every cell of its kind)

    def command(self, values: dict[str, str]) -> list[str]:
        """The command line with {placeholders} filled in, one token at a time."""
        return fill_all(self.argv, values, self.name)


class HttpSubject(SubjectBase):
    """A subject that answers HTTP: the path probed and verified, and the answer it must give."""

    path: UrlPath = "/"
    expect: Expectation = Expectation()


class Server(HttpSubject):
    """A server under test: ab or wrk loads it, pinned to the server CPU."""

    role: Literal["server"] = "server"


class Ceiling(HttpSubject):
    """A C server on a static file: measures the load tool's own limit on this machine."""

    role: Literal["ceiling"] = "ceiling"


class Backend(HttpSubject):
    """A service others talk to (an SCGI backend, the clients' API): started, never measured itself."""

    role: Literal["backend"] = "backend"
    probe: Literal["http", "tcp"] = "http"  # tcp: it accepts connections but does not speak HTTP


class Client(SubjectBase):
    """A program under test that makes the load itself and reports its own run."""

    role: Literal["client"] = "client"


def _role_of(value: Any) -> str | None:
    if isinstance(value, dict):
        role = value.get("role", "server")
        return role if isinstance(role, str) else repr(role)
    return getattr(value, "role", None)


Subject = Annotated[
    Annotated[Server, Tag("server")]
    | Annotated[Ceiling, Tag("ceiling")]
    | Annotated[Backend, Tag("backend")]
    | Annotated[Client, Tag("client")],
    Discriminator(_role_of),
]
AnySubject = Server | Ceiling | Backend | Client
MeasuredSubject = Server | Ceiling | Client


class Matrix(Record):
    """ab cells: every concurrency with every keep-alive setting."""

    tool: Literal["ab"] = "ab"
    concurrency: Seq[Annotated[int, Field(ge=1, le=20000)]] = Field(min_length=1)
    keepalive: Seq[bool] = (False,)
    variable_length: bool = False

    def cells(self) -> list[AbCell]:
        return [
            AbCell.model_validate({"concurrency": c, "keepalive": k, "variable_length": self.variable_length})
            for c in self.concurrency
            for k in self.keepalive
        ]


class RecipeFile(Record):
    """recipes/<name>/recipe.toml."""

    title: Line
    packages: Seq[str] = ()
    # The distributions every {python} subject runs besides those of its own `requires` (bottle, under each
    # of Bottle's adapters): what a NAME==VERSION variant finds the subjects it changes by.
    common_packages: Seq[str] = ()
    subjects: Seq[Subject] = Field(min_length=1)
    matrix: Matrix | None = None
    cells: Seq[Cell] = ()

    @model_validator(mode="before")
    @classmethod
    def _ab_by_default(cls, data: Any) -> Any:
        """A [[cells]] table without `tool` is an ab cell."""
        if isinstance(data, dict) and isinstance(data.get("cells"), list):
            data = {**data, "cells": [{"tool": "ab", **c} if isinstance(c, dict) else c for c in data["cells"]]}
        return data

    @property
    def all_cells(self) -> tuple[AnyCell, ...]:
        """The matrix's cells, then the [[cells]] tables."""
        return (*(self.matrix.cells() if self.matrix else ()), *self.cells)

    @model_validator(mode="after")
    def _names_agree(self) -> RecipeFile:
        if not self.all_cells:
            raise ValueError("no load cells: add a [matrix] or [[cells]]")
        _unique("subject", [s.name for s in self.subjects])
        cell_names = [cell.name for cell in self.all_cells]
        _unique("cell", cell_names)
        for index, subject in enumerate(self.subjects):
            unknown = [name for name in subject.cells if name not in cell_names]
            if unknown:
                raise ValueError(
                    f"subjects[{index}].cells: {', '.join(unknown)} unknown: I know about {', '.join(cell_names)}"
                )
        if any(isinstance(s, Client) for s in self.subjects) and not any(isinstance(s, Backend) for s in self.subjects):
            raise ValueError('clients need a subject with role = "backend" to talk to: add one')
        return self


def _unique(what: str, names: list[str]) -> None:
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"{what} names repeat ({', '.join(repeated)}): make each unique")


@dataclass(frozen=True)
class Recipe:
    """Everything needed to run one benchmark page's measurements."""

    name: str
    title: str
    directory: Path
    conf_path: Path
    subjects: tuple[Server | Ceiling | Backend | Client, ...]
    cells: tuple[AnyCell, ...]
    packages: tuple[str, ...]
    profiles: dict[str, Profile]
    settings: Settings
    sweeps: dict[str, Sweep] = dataclasses.field(default_factory=dict)  # by package: what a sweep of it runs
    flame: FlamePlan | None = None  # py-spy flame graphs after the timed rounds
    wallclock: FlamePlan | None = None  # py-spy wall-clock profiles (idle threads too) after the timed rounds
    variants: VariantSet | None = None  # an A/B run's or a release sweep's variants, as its copies ran them
    common_packages: tuple[str, ...] = ()  # what every {python} subject runs besides its own requires

    def sweep_of(self, profile: Profile) -> Sweep | None:
        """The sweep whose releases the profile measures (None: it measures no releases)."""
        return self.sweeps.get(profile.sweep) if profile.releases and profile.sweep else None

    @property
    def main_sweep(self) -> Sweep | None:
        """The sweep `release:VERSION` means: the conf's first."""
        return next(iter(self.sweeps.values()), None)

    @property
    def recipe_path(self) -> Path:
        return self.directory / RECIPE_FILE

    def subject(self, name: str) -> Server | Ceiling | Backend | Client | None:
        return next((subject for subject in self.subjects if subject.name == name), None)

    def cell(self, name: str) -> AnyCell | None:
        return next((cell for cell in self.cells if cell.name == name), None)

    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(sorted(self.profiles))
            raise BenchError(
                f"recipe {self.name!r} has no profile {name!r}: I know about {known} (see {self.conf_path})"
            ) from None

    def _check_profiles(self) -> None:
        subject_names = [s.name for s in self.subjects]
        cell_names = [c.name for c in self.cells]
        for profile in self.profiles.values():
            for key, wanted, known in (
                ("subjects", profile.subjects, subject_names),
                ("cells", profile.cells, cell_names),
                ("warmup_cells", profile.warmup_cells, cell_names),
                ("cell_requests", tuple(profile.cell_requests), cell_names),
            ):
                unknown = [name for name in wanted if name not in known]
                if unknown:
                    raise BenchError(
                        f"{self.conf_path}: profiles.{profile.name}.{key}: {', '.join(unknown)} "
                        f"unknown: I know about {', '.join(known)}: fix the file"
                    )

    def _check_latency(self) -> None:
        """A profile's [profiles.NAME.latency] names a closed-loop cell of the recipe for the capacity."""
        closed = {cell.name for cell in self.cells if cell.tool in ("ab", "wrk", "h2load")}
        for profile in self.profiles.values():
            if profile.latency is not None and profile.latency.capacity_cell not in closed:
                raise BenchError(
                    f"{self.conf_path}: profiles.{profile.name}.latency.capacity_cell "
                    f"{profile.latency.capacity_cell!r} is not a closed-loop cell of this recipe: name one of "
                    f"{', '.join(sorted(closed))}"
                )

    def _check_sweep(self) -> None:
        known = [s.name for s in self.subjects]
        for package, sweep in self.sweeps.items():
            unknown = [name for name in (*sweep.subjects, *sweep.labels) if name not in known]
            if unknown:
                raise BenchError(
                    f"{self.conf_path}: sweeps.{package}: {', '.join(unknown)} unknown: I know about "
                    f"{', '.join(known)}: fix the file"
                )

    def _check_files(self) -> None:
        """Every template a subject names is in the recipe's folder, and a program named by an absolute path
        exists unless the subject lists it as a requirement (then a missing one skips the subject)."""
        for index, subject in enumerate(self.subjects):
            for number, template in enumerate(subject.templates):
                if not (self.directory / template.source).is_file():
                    raise BenchError(
                        f"{self.recipe_path}: subjects[{index}].templates[{number}].source: {template.source} is "
                        f"not in {self.directory.name}/: add the file or fix the name"
                    )
            program = subject.argv[0]
            if program.startswith("/") and program not in subject.requires_programs and not Path(program).exists():
                raise BenchError(
                    f"{self.recipe_path}: subjects[{index}].argv[0]: {program} does not exist: fix the path, or add "
                    "it to requires_programs so the subject is skipped where it is missing"
                )

    def plan(self, profile: Profile) -> list[tuple[Server | Ceiling | Backend | Client, list[AnyCell]]]:
        """The subjects a profile runs, each with the cells it runs, in recipe order; backends with none."""
        plan: list[tuple[Server | Ceiling | Backend | Client, list[AnyCell]]] = []
        for subject in self.subjects:
            if isinstance(subject, Backend):
                plan.append((subject, []))  # started for the others, never measured itself
                continue
            if profile.subjects and subject.name not in profile.subjects:
                continue
            cells = [
                self._shortened(cell, profile)
                for cell in self.cells
                if (not profile.cells or cell.name in profile.cells)
                and (not subject.cells or cell.name in subject.cells)
                and cell.loads_a_server != isinstance(subject, Client)
            ]
            if cells:
                plan.append((subject, cells))
        return plan

    @staticmethod
    def _shortened(cell: AnyCell, profile: Profile) -> AnyCell:
        return cell.shortened_to(profile.wrk_duration_s) if profile.wrk_duration_s else cell


def fill_placeholders(token: str, values: dict[str, str], owner: str) -> str:
    """Fill {name} fields of one argv token; an unknown name is an error listing the known ones."""
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(token)]
    except ValueError as error:
        raise BenchError(f"the command of {owner!r} has a malformed placeholder in {token!r} ({error})") from None
    for field in fields:
        if field is not None and field not in values:
            known = ", ".join("{" + key + "}" for key in sorted(values))
            raise BenchError(f"unknown placeholder {{{field}}} in the command of {owner!r}: I know about {known}")
    return token.format_map(values)


def fill_all(template: tuple[str, ...], values: dict[str, str], owner: str) -> list[str]:
    return [fill_placeholders(token, values, owner) for token in template]


def available_recipes(recipes_dir: Path) -> list[str]:
    """Names of the recipes under recipes_dir (folders holding a recipe.toml)."""
    if not recipes_dir.is_dir():
        return []
    return sorted(path.parent.name for path in recipes_dir.glob(f"*/{RECIPE_FILE}"))


def load_recipe(name: str, recipes_dir: Path, conf_dir: Path) -> Recipe:
    """Read recipes/<name>/recipe.toml and conf/<name>.toml into a Recipe; any problem is one BenchError."""
    directory = recipes_dir / name
    recipe_path = directory / RECIPE_FILE
    if not recipe_path.is_file():
        known = ", ".join(available_recipes(recipes_dir)) or "none"
        raise BenchError(f"unknown recipe {name!r}: I know about {known} (see `.venv/bin/invoke recipes`)")
    conf_path = conf_dir / f"{name}.toml"
    if not conf_path.is_file():
        raise BenchError(f"recipe {name!r} has no conf file {conf_path}: create it with a [profiles.quick] table")
    declared = RecipeFile.from_json(read_toml(recipe_path), recipe_path)
    conf = ConfFile.from_json(read_toml(conf_path), conf_path)
    recipe = Recipe(
        name=name,
        title=declared.title,
        directory=directory,
        conf_path=conf_path,
        subjects=declared.subjects,
        cells=declared.all_cells,
        packages=declared.packages,
        common_packages=declared.common_packages,
        profiles=conf.profiles,
        settings=conf.settings,
        sweeps=conf.sweeps,
        flame=conf.flame,
        wallclock=conf.wallclock,
    )
    recipe._check_profiles()
    recipe._check_latency()
    recipe._check_sweep()
    recipe._check_files()
    return recipe
