"""The recipe model: subjects, load cells and profiles, read from recipes/ and conf/."""

from __future__ import annotations

import itertools
import string
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchsite.errors import BenchError

SUPPORTED_TOOLS = ("ab", "wrk", "client")
# subject: a server under load; ceiling: a C server measuring the load tool's limit;
# server: a service the clients under test talk to; client: a program under test that makes the load itself
ROLES = ("subject", "ceiling", "server", "client")
RECIPE_FILE = "recipe.toml"


@dataclass(frozen=True)
class Expectation:
    """What a correct response from a subject looks like, checked before any load."""

    status: int
    body: bytes | None
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Subject:
    """A server under test: how to start it and what it must answer."""

    name: str
    label: str
    argv_template: tuple[str, ...]
    path: str
    expect: Expectation
    source_files: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()  # modules that must import, else the subject is skipped
    requires_programs: tuple[str, ...] = ()  # programs that must exist ({bin}: the venv's bin), likewise
    skip_reason: str = ""  # why they may be missing, shown on the page
    role: str = "subject"  # "ceiling": a C server measuring the load tool's own limit
    templates: tuple[tuple[str, str], ...] = ()  # (source in the recipe folder, file in {workdir})
    prepare: tuple[str, ...] = ()  # a command run to completion before the subject starts (makes its files)
    probe: str = "http"  # readiness: "http" (a verified GET) or "tcp" (accepts connections: an SCGI backend)
    only_cells: tuple[str, ...] = ()  # run only these cells (empty: all)

    def argv(self, values: dict[str, str]) -> list[str]:
        """The command line with {placeholders} filled in, one token at a time."""
        return self.argv_of(self.argv_template, values)

    def argv_of(self, template: tuple[str, ...], values: dict[str, str]) -> list[str]:
        return [fill_placeholders(token, values, self.name) for token in template]


@dataclass(frozen=True)
class Cell:
    """One load setting: tool, concurrency (wrk: connections), keep-alive."""

    tool: str
    concurrency: int
    keepalive: bool
    variable_length: bool = False
    duration_s: int = 0  # wrk only: how long it runs
    threads: int = 1  # wrk only
    scheme: str = "http"  # client cells: http or https
    path: str = ""  # client cells: the path requested
    title: str = ""  # client cells: name and label given in the recipe, "name|label"

    @property
    def name(self) -> str:
        if self.title:
            return self.title.split("|")[0]
        if self.tool == "wrk":
            return f"wrk-c{self.concurrency}"
        return f"c{self.concurrency}" + ("-k" if self.keepalive else "")

    @property
    def label(self) -> str:
        if self.title:
            return self.title.split("|")[1]
        if self.tool == "wrk":
            return f"wrk -c {self.concurrency}"
        return f"-c {self.concurrency}" + (" -k" if self.keepalive else "")


@dataclass(frozen=True)
class Profile:
    """How much load: requests per run, repetitions, warm-up; optionally a subset of subjects and cells."""

    name: str
    requests: int
    repetitions: int
    warmup_requests: int
    subjects: tuple[str, ...] = ()  # empty: every subject
    cells: tuple[str, ...] = ()  # empty: every cell
    warmup_cells: tuple[str, ...] = ()  # empty: warm up with every ab cell
    wrk_duration_s: int = 0  # 0: each wrk cell's own duration
    cell_requests: tuple[tuple[str, int], ...] = ()  # (cell, requests): cells that run another count

    def requests_for(self, cell: Cell) -> int:
        return dict(self.cell_requests).get(cell.name, self.requests)


@dataclass(frozen=True)
class Settings:
    """Machine-level knobs from conf/<recipe>.toml [settings]."""

    server_cpu: int | None = 0
    tool_cpu: int | None = 1
    port: int = 0
    socket_timeout_s: int = 30
    cell_timeout_s: float = 300.0
    start_timeout_s: float = 20.0
    ab_path: str = "ab"
    wrk_path: str = "wrk"


@dataclass(frozen=True)
class Recipe:
    """Everything needed to run one benchmark page's measurements."""

    name: str
    title: str
    directory: Path
    conf_path: Path
    subjects: tuple[Subject, ...]
    cells: tuple[Cell, ...]
    packages: tuple[str, ...]
    profiles: dict[str, Profile]
    settings: Settings

    def profile(self, name: str) -> Profile:
        try:
            profile = self.profiles[name]
        except KeyError:
            known = ", ".join(sorted(self.profiles))
            raise BenchError(
                f"recipe {self.name!r} has no profile {name!r}: I know about {known} (see {self.conf_path})"
            ) from None
        self._check_names(profile.subjects, [s.name for s in self.subjects], f"profile {name!r}: subject")
        cell_names = [c.name for c in self.cells]
        self._check_names(profile.cells, cell_names, f"profile {name!r}: cell")
        self._check_names(profile.warmup_cells, cell_names, f"profile {name!r}: warm-up cell")
        self._check_names(tuple(dict(profile.cell_requests)), cell_names, f"profile {name!r}: cell_requests cell")
        return profile

    def _check_names(self, wanted: tuple[str, ...], known: list[str], what: str) -> None:
        unknown = [name for name in wanted if name not in known]
        if unknown:
            raise BenchError(f"{self.conf_path}: {what} {', '.join(unknown)} unknown: I know about {', '.join(known)}")

    def plan(self, profile: Profile) -> list[tuple[Subject, list[Cell]]]:
        """The subjects a profile runs, each with the cells it runs, in recipe order."""
        plan = []
        for subject in self.subjects:
            if profile.subjects and subject.name not in profile.subjects and subject.role != "server":
                continue
            cells = [replace(cell, duration_s=profile.wrk_duration_s)
                     if cell.tool == "wrk" and profile.wrk_duration_s else cell
                     for cell in self.cells
                     if (not profile.cells or cell.name in profile.cells)
                     and (not subject.only_cells or cell.name in subject.only_cells)
                     and (cell.tool == "client") == (subject.role == "client")]
            if subject.role == "server":
                cells = []  # a service the clients talk to: started, never measured itself
            if cells or subject.role == "server":
                plan.append((subject, cells))
        return plan


def fill_placeholders(token: str, values: dict[str, str], owner: str) -> str:
    """Fill {name} fields of one argv token; an unknown name is an error listing the known ones."""
    for _, field, _, _ in string.Formatter().parse(token):
        if field is not None and field not in values:
            known = ", ".join("{" + key + "}" for key in sorted(values))
            raise BenchError(f"unknown placeholder {{{field}}} in the command of {owner!r}: I know about {known}")
    return token.format_map(values)


def available_recipes(recipes_dir: Path) -> list[str]:
    """Names of the recipes under recipes_dir (folders holding a recipe.toml)."""
    if not recipes_dir.is_dir():
        return []
    return sorted(path.parent.name for path in recipes_dir.glob(f"*/{RECIPE_FILE}"))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise BenchError(f"{path}: not valid TOML ({error}): fix the file") from None


def _get(table: dict[str, Any], key: str, kind: type, path: Path, default: Any = ...) -> Any:
    if key not in table:
        if default is ...:
            raise BenchError(f"{path}: missing key {key!r}: add it")
        return default
    value = table[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BenchError(f"{path}: {key!r} must be a {kind.__name__}, not {value!r}")
    return value


def _subject(table: dict[str, Any], path: Path) -> Subject:
    expect = _get(table, "expect", dict, path, {})
    body = _get(expect, "body", str, path, None)
    headers = _get(expect, "headers", dict, path, {})
    return Subject(
        name=_get(table, "name", str, path),
        label=_get(table, "label", str, path),
        argv_template=tuple(_get(table, "argv", list, path)),
        path=_get(table, "path", str, path, "/"),
        expect=Expectation(
            status=_get(expect, "status", int, path, 200),
            body=None if body is None else body.encode(),
            headers=tuple(sorted(headers.items())),
        ),
        source_files=tuple(_get(table, "source_files", list, path, [])),
        requires=tuple(_get(table, "requires", list, path, [])),
        requires_programs=tuple(_get(table, "requires_programs", list, path, [])),
        skip_reason=_get(table, "skip_reason", str, path, ""),
        role=_role(_get(table, "role", str, path, "subject"), path),
        templates=tuple((t["source"], t["target"]) for t in _get(table, "templates", list, path, [])),
        only_cells=tuple(_get(table, "cells", list, path, [])),
        prepare=tuple(_get(table, "prepare", list, path, [])),
        probe=_probe(_get(table, "probe", str, path, "http"), path),
    )


def _probe(probe: str, path: Path) -> str:
    if probe not in ("http", "tcp"):
        raise BenchError(f"{path}: probe {probe!r} is unknown: use http or tcp")
    return probe


def _role(role: str, path: Path) -> str:
    if role not in ROLES:
        raise BenchError(f"{path}: role {role!r} is unknown: use one of {', '.join(ROLES)}")
    return role


def _tool(table: dict[str, Any], path: Path) -> str:
    tool = _get(table, "tool", str, path, "ab")
    if tool not in SUPPORTED_TOOLS:
        raise BenchError(f"{path}: tool {tool!r} is not supported: use one of {', '.join(SUPPORTED_TOOLS)}")
    return tool


def _matrix_cells(matrix: dict[str, Any], path: Path) -> list[Cell]:
    """ab cells: every concurrency with every keep-alive setting."""
    tool = _tool(matrix, path)
    if tool != "ab":
        raise BenchError(f"{path}: [matrix] is for ab; declare wrk cells as [[cells]] with tool = \"wrk\"")
    concurrencies = _get(matrix, "concurrency", list, path)
    keepalives = _get(matrix, "keepalive", list, path, [False])
    variable_length = _get(matrix, "variable_length", bool, path, False)
    return [
        Cell(tool=tool, concurrency=int(c), keepalive=bool(k), variable_length=variable_length)
        for c, k in itertools.product(concurrencies, keepalives)
    ]


def _listed_cell(table: dict[str, Any], path: Path) -> Cell:
    """One [[cells]] entry: an ab cell, or a wrk cell (always keep-alive, bounded by duration)."""
    tool = _tool(table, path)
    if tool == "client":
        scheme = _get(table, "scheme", str, path, "http")
        if scheme not in ("http", "https"):
            raise BenchError(f"{path}: scheme {scheme!r} is unknown: use http or https")
        return Cell(tool=tool, concurrency=1, keepalive=False, scheme=scheme, path=_get(table, "path", str, path),
                    title=f"{_get(table, 'name', str, path)}|{_get(table, 'label', str, path)}")
    if tool == "wrk":
        return Cell(tool=tool, concurrency=_get(table, "connections", int, path), keepalive=True,
                    duration_s=_get(table, "duration_s", int, path), threads=_get(table, "threads", int, path, 1))
    title = f"{table['name']}|{_get(table, 'label', str, path)}" if "name" in table else ""
    return Cell(tool=tool, concurrency=_get(table, "concurrency", int, path),
                keepalive=_get(table, "keepalive", bool, path, False),
                variable_length=_get(table, "variable_length", bool, path, False),
                path=_get(table, "path", str, path, ""), title=title)


def _cells(data: dict[str, Any], path: Path) -> tuple[Cell, ...]:
    cells = _matrix_cells(data["matrix"], path) if "matrix" in data else []
    cells += [_listed_cell(table, path) for table in _get(data, "cells", list, path, [])]
    if not cells:
        raise BenchError(f"{path}: no load cells: add a [matrix] or [[cells]]")
    names = [cell.name for cell in cells]
    if len(set(names)) != len(names):
        raise BenchError(f"{path}: cells repeat ({', '.join(names)}): each cell must be unique")
    return tuple(cells)


def _profiles(conf: dict[str, Any], path: Path) -> dict[str, Profile]:
    profiles = {}
    for name, table in _get(conf, "profiles", dict, path).items():
        profiles[name] = Profile(
            name=name,
            requests=_get(table, "requests", int, path),
            repetitions=_get(table, "repetitions", int, path),
            warmup_requests=_get(table, "warmup_requests", int, path, 0),
            subjects=tuple(_get(table, "subjects", list, path, [])),
            cells=tuple(_get(table, "cells", list, path, [])),
            warmup_cells=tuple(_get(table, "warmup_cells", list, path, [])),
            wrk_duration_s=_get(table, "wrk_duration_s", int, path, 0),
            cell_requests=tuple(_get(table, "cell_requests", dict, path, {}).items()),
        )
    return profiles


def _settings(conf: dict[str, Any], path: Path) -> Settings:
    table = _get(conf, "settings", dict, path, {})
    defaults = Settings()
    known = set(Settings.__dataclass_fields__)
    unknown = set(table) - known
    if unknown:
        raise BenchError(
            f"{path}: unknown setting(s) {', '.join(sorted(unknown))}: I know about {', '.join(sorted(known))}"
        )
    return Settings(**{**defaults.__dict__, **table})


def load_recipe(name: str, recipes_dir: Path, conf_dir: Path) -> Recipe:
    """Read recipes/<name>/recipe.toml and conf/<name>.toml into a Recipe."""
    directory = recipes_dir / name
    recipe_path = directory / RECIPE_FILE
    if not recipe_path.is_file():
        known = ", ".join(available_recipes(recipes_dir)) or "none"
        raise BenchError(f"unknown recipe {name!r}: I know about {known} (see `invoke recipes`)")
    conf_path = conf_dir / f"{name}.toml"
    if not conf_path.is_file():
        raise BenchError(f"recipe {name!r} has no conf file {conf_path}: create it with a [profiles.quick] table")
    data = _read_toml(recipe_path)
    conf = _read_toml(conf_path)
    subjects = tuple(_subject(table, recipe_path) for table in _get(data, "subjects", list, recipe_path))
    if not subjects:
        raise BenchError(f"{recipe_path}: no [[subjects]]: declare at least one")
    names = [subject.name for subject in subjects]
    if len(set(names)) != len(names):
        raise BenchError(f"{recipe_path}: subject names repeat ({', '.join(names)}): make each unique")
    return Recipe(
        name=name,
        title=_get(data, "title", str, recipe_path),
        directory=directory,
        conf_path=conf_path,
        subjects=subjects,
        cells=_cells(data, recipe_path),
        packages=tuple(_get(data, "packages", list, recipe_path, [])),
        profiles=_profiles(conf, conf_path),
        settings=_settings(conf, conf_path),
    )
