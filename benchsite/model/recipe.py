"""What a recipe declares: its subjects (by kind), its loads (by tool), its profiles and settings.

recipes/<name>/recipe.toml says what to compare; conf/<name>.toml says how hard and where
(profiles, CPU pinning, timeouts). Both are read through strict schemas: an unknown key, a
wrong type or a number out of range is a one-line error naming the file and the key.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Discriminator, Field, StringConstraints, Tag, model_validator

from benchsite.errors import BenchError
from benchsite.model.base import InnerPath, Record, Seq, read_toml

RECIPE_FILE = "recipe.toml"

# Names become folder names of the stored run (raw/<subject>/<cell>/): no slashes, no dots.
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=64)]
Text = Annotated[str, StringConstraints(min_length=1)]
UrlPath = Annotated[str, StringConstraints(pattern=r"^/")]
Port = Annotated[int, Field(ge=0, le=65535)]


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
    label: Text
    argv: Seq[str] = Field(min_length=1)
    source_files: Seq[InnerPath] = ()
    requires: Seq[str] = ()  # modules that must import, else the subject is skipped
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


class AbLoad(Record):
    """An ab cell: -n requests (from the profile) at -c concurrency, with or without -k."""

    tool: Literal["ab"] = "ab"
    name: Name
    label: Text
    concurrency: int = Field(ge=1, le=20000)
    keepalive: bool = False
    variable_length: bool = False  # ab -l: bodies of varying length are not failures
    path: UrlPath | Literal[""] = ""  # empty: the subject's own path

    @model_validator(mode="before")
    @classmethod
    def _default_names(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("concurrency"), int):
            keepalive = data.get("keepalive") is True
            c = data["concurrency"]
            data = {
                "name": f"c{c}" + ("-k" if keepalive else ""),
                "label": f"-c {c}" + (" -k" if keepalive else ""),
                **data,
            }
        return data


class WrkLoad(Record):
    """A wrk cell: -c connections for -d seconds, always keep-alive."""

    tool: Literal["wrk"] = "wrk"
    name: Name
    label: Text
    connections: int = Field(ge=1, le=20000)
    duration_s: int = Field(ge=1, le=3600)
    threads: int = Field(default=1, ge=1, le=64)
    path: UrlPath | Literal[""] = ""

    keepalive: ClassVar[bool] = True

    @property
    def concurrency(self) -> int:
        return self.connections

    @model_validator(mode="before")
    @classmethod
    def _default_names(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("connections"), int):
            c = data["connections"]
            data = {"name": f"wrk-c{c}", "label": f"wrk -c {c}", **data}
        return data


class ClientLoad(Record):
    """A cell of a client under test: the URL scheme and path it requests, one request at a time."""

    tool: Literal["client"] = "client"
    name: Name
    label: Text
    scheme: Literal["http", "https"] = "http"
    path: UrlPath

    keepalive: ClassVar[bool] = False
    concurrency: ClassVar[int] = 1


def _tool_of(value: Any) -> str | None:
    if isinstance(value, dict):
        tool = value.get("tool", "ab")
        return tool if isinstance(tool, str) else repr(tool)
    return getattr(value, "tool", None)


Load = Annotated[
    Annotated[AbLoad, Tag("ab")] | Annotated[WrkLoad, Tag("wrk")] | Annotated[ClientLoad, Tag("client")],
    Discriminator(_tool_of),
]
AnyLoad = AbLoad | WrkLoad | ClientLoad


class Matrix(Record):
    """ab cells: every concurrency with every keep-alive setting."""

    tool: Literal["ab"] = "ab"
    concurrency: Seq[Annotated[int, Field(ge=1, le=20000)]] = Field(min_length=1)
    keepalive: Seq[bool] = (False,)
    variable_length: bool = False

    def loads(self) -> list[AbLoad]:
        return [
            AbLoad.model_validate({"concurrency": c, "keepalive": k, "variable_length": self.variable_length})
            for c in self.concurrency
            for k in self.keepalive
        ]


class RecipeFile(Record):
    """recipes/<name>/recipe.toml."""

    title: Text
    packages: Seq[str] = ()
    subjects: Seq[Subject] = Field(min_length=1)
    matrix: Matrix | None = None
    cells: Seq[Load] = ()

    @property
    def loads(self) -> tuple[AnyLoad, ...]:
        return (*(self.matrix.loads() if self.matrix else ()), *self.cells)

    @model_validator(mode="after")
    def _names_agree(self) -> RecipeFile:
        if not self.loads:
            raise ValueError("no load cells: add a [matrix] or [[cells]]")
        _unique("subject", [s.name for s in self.subjects])
        cell_names = [load.name for load in self.loads]
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


class Profile(Record):
    """How much load: requests per run, repetitions, warm-up; optionally a subset of subjects and cells."""

    name: Name
    requests: int = Field(ge=1, le=10_000_000)
    repetitions: int = Field(ge=1, le=1000)
    warmup_requests: int = Field(ge=0, le=10_000_000)
    subjects: Seq[Name]  # empty: every subject
    cells: Seq[Name]  # empty: every cell
    warmup_cells: Seq[Name]  # empty: warm up with every ab cell
    wrk_duration_s: int = Field(ge=0, le=3600)  # 0: each wrk cell's own duration
    cell_requests: dict[str, Annotated[int, Field(ge=1, le=10_000_000)]]  # cells that run another count
    # After `repetitions` rounds of every cell, further rounds of the cells whose claims are still
    # inconclusive, up to max_rounds in all (0: none) and while the whole run stays within time_budget_s.
    max_rounds: int = Field(ge=0, le=1000)
    time_budget_s: float = Field(ge=0, le=86400)

    @model_validator(mode="after")
    def _bounded_rounds(self) -> Profile:
        if self.max_rounds and self.max_rounds < self.repetitions:
            raise ValueError(
                f"profiles.{self.name}.max_rounds ({self.max_rounds}) is below repetitions "
                f"({self.repetitions}): raise it, or 0 for no further rounds"
            )
        if self.max_rounds and not self.time_budget_s:
            raise ValueError(f"profiles.{self.name}: further rounds (max_rounds) need a time_budget_s")
        return self

    def requests_for(self, load: AnyLoad) -> int:
        return self.cell_requests.get(load.name, self.requests)


PROFILE_DEFAULTS: dict[str, Any] = {
    "warmup_requests": 0,
    "subjects": [],
    "cells": [],
    "warmup_cells": [],
    "wrk_duration_s": 0,
    "cell_requests": {},
    "max_rounds": 0,
    "time_budget_s": 0,
}


class Settings(Record):
    """Machine-level knobs from conf/<recipe>.toml [settings]."""

    server_cpu: Annotated[int, Field(ge=0, le=4095)] | None
    tool_cpu: Annotated[int, Field(ge=0, le=4095)] | None
    port: Port  # 0: a free port per subject; N: ports N, N+1, ...
    socket_timeout_s: int = Field(ge=1, le=3600)
    cell_timeout_s: float = Field(gt=0, le=86400)
    start_timeout_s: float = Field(gt=0, le=3600)
    ab_path: Text
    wrk_path: Text
    # The order within a round: "cell" (every subject of a cell back to back, the order turning round
    # every other round) or "subject" (every cell of a subject back to back, as the first runs did).
    interleave: Literal["cell", "subject"]


SETTINGS_DEFAULTS: dict[str, Any] = {
    "server_cpu": 0,
    "tool_cpu": 1,
    "port": 0,
    "socket_timeout_s": 30,
    "cell_timeout_s": 300.0,
    "start_timeout_s": 20.0,
    "ab_path": "ab",
    "wrk_path": "wrk",
    "interleave": "cell",
}


class ConfFile(Record):
    """conf/<name>.toml: [settings] (each with a default) and at least one [profiles.NAME]."""

    settings: Settings
    profiles: dict[str, Profile] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        settings = data.get("settings", {})
        if isinstance(settings, dict):
            data["settings"] = {**SETTINGS_DEFAULTS, **settings}
        profiles = data.get("profiles")
        if isinstance(profiles, dict):
            data["profiles"] = {
                name: {**PROFILE_DEFAULTS, **table, "name": name} if isinstance(table, dict) else table
                for name, table in profiles.items()
            }
        return data


@dataclass(frozen=True)
class Recipe:
    """Everything needed to run one benchmark page's measurements."""

    name: str
    title: str
    directory: Path
    conf_path: Path
    subjects: tuple[Server | Ceiling | Backend | Client, ...]
    loads: tuple[AnyLoad, ...]
    packages: tuple[str, ...]
    profiles: dict[str, Profile]
    settings: Settings

    @property
    def recipe_path(self) -> Path:
        return self.directory / RECIPE_FILE

    def subject(self, name: str) -> Server | Ceiling | Backend | Client | None:
        return next((subject for subject in self.subjects if subject.name == name), None)

    def load(self, name: str) -> AnyLoad | None:
        return next((load for load in self.loads if load.name == name), None)

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
        cell_names = [c.name for c in self.loads]
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

    def plan(self, profile: Profile) -> list[tuple[Server | Ceiling | Backend | Client, list[AnyLoad]]]:
        """The subjects a profile runs, each with the loads it runs, in recipe order; backends with none."""
        plan: list[tuple[Server | Ceiling | Backend | Client, list[AnyLoad]]] = []
        for subject in self.subjects:
            if isinstance(subject, Backend):
                plan.append((subject, []))  # started for the others, never measured itself
                continue
            if profile.subjects and subject.name not in profile.subjects:
                continue
            loads = [
                self._shortened(load, profile)
                for load in self.loads
                if (not profile.cells or load.name in profile.cells)
                and (not subject.cells or load.name in subject.cells)
                and isinstance(load, ClientLoad) == isinstance(subject, Client)
            ]
            if loads:
                plan.append((subject, loads))
        return plan

    @staticmethod
    def _shortened(load: AnyLoad, profile: Profile) -> AnyLoad:
        if isinstance(load, WrkLoad) and profile.wrk_duration_s:
            return load.model_copy(update={"duration_s": profile.wrk_duration_s})
        return load


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
        loads=declared.loads,
        packages=declared.packages,
        profiles=conf.profiles,
        settings=conf.settings,
    )
    recipe._check_profiles()
    return recipe
