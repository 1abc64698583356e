"""The ground floor beneath tools, model and results: strict records, one-line errors naming file and key.

Records are frozen pydantic models that refuse unknown keys, refuse a string where a
number belongs (and NaN or infinity anywhere), and check ranges. A validation error
becomes a BenchError of one line: the file, the key's path, what is wrong, what to do.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, StringConstraints, ValidationError
from pydantic_core import ErrorDetails

from benchsite.errors import BenchError

T = TypeVar("T")
M = TypeVar("M", bound="Record")

# A sequence read from TOML or JSON (a list there, a tuple here); its items stay strict.
Seq = Annotated[tuple[T, ...], Strict(False)]
U = TypeVar("U")
# A pair read from TOML or JSON ([a, b] there, (a, b) here); its items stay strict.
Pair = Annotated[tuple[T, U], Strict(False)]


def _inside(path: str) -> str:
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"{path!r} must be a relative path inside its folder (no leading /, no . or ..)")
    return path


# A file inside a folder (a recipe's, a run's): relative, never climbing out of it.
InnerPath = Annotated[str, AfterValidator(_inside)]
# Names become folder names of a stored run (raw/<subject>/<cell>/): no slashes, no dots.
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=64)]
Text = Annotated[str, StringConstraints(min_length=1)]
# A title or a label: one line of text, no control characters (a page reads it as one line of its own).
Line = Annotated[str, StringConstraints(min_length=1, pattern=r"^[^\x00-\x1f\x7f]+$")]
UrlPath = Annotated[str, StringConstraints(pattern=r"^/")]
WebAddress = Annotated[str, StringConstraints(pattern=r"^https?://[^\s<>\"]+$")]
Port = Annotated[int, Field(ge=0, le=65535)]


class Record(BaseModel):
    """A frozen, strict record: unknown keys, wrong types and non-finite numbers are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples as lists); `from_json` reads it back."""
        return self.model_dump(mode="json")

    @classmethod
    def from_json(cls: type[M], data: Any, source: Path | str) -> M:
        """Validate a decoded JSON or TOML document; a problem is a BenchError naming source and key."""
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            raise BenchError(describe(error, cls, source)) from None


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The record classes an annotation may hold (through Annotated, unions, tuples and dicts)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for argument in get_args(annotation):
        found += _models_in(argument)
    return found


def _keyed_by_name(annotation: Any) -> bool:
    """Whether a field is a table of records keyed by name ([profiles.full]): its next step is a key."""
    return get_origin(annotation) is dict or any(
        _keyed_by_name(a) for a in get_args(annotation) if get_origin(a) is not None
    )


def _tagged(model: type[BaseModel], step: str) -> bool:
    """Whether a discriminated union's location step names this record kind (its tag, not a field)."""
    if step in model.model_fields:
        return False
    return any(
        get_origin(field.annotation) is Literal and get_args(field.annotation) == (step,)
        for field in model.model_fields.values()
    )


def _walk(root: type[BaseModel], location: tuple[int | str, ...]) -> tuple[type[BaseModel] | None, tuple]:
    """The record class at a validation error's location, and the location as the file spells it
    (without the kind tags of discriminated unions)."""
    current: list[type[BaseModel]] = [root]
    spelled: list[int | str] = []
    skip_key = False
    for step in location:
        if isinstance(step, int) or skip_key:
            spelled.append(step)
            skip_key = False
            continue
        by_tag = [model for model in current if _tagged(model, step)]
        if by_tag:  # a discriminated union names the chosen kind in the location
            current = by_tag
            continue
        spelled.append(step)
        nested: list[type[BaseModel]] = []
        for model in current:
            field = model.model_fields.get(step)
            if field is not None:
                nested += _models_in(field.annotation)
                skip_key = skip_key or _keyed_by_name(field.annotation)
        current = nested
    return (current[0] if len(current) == 1 else None), tuple(spelled)


def _where(location: tuple[int | str, ...]) -> str:
    """A location as a TOML/JSON reader writes it: profiles.full.rounds, subjects[2].argv[0]."""
    text = ""
    for step in location:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text or "the top level"


# Keys of conf files that were renamed, with their new names (conf files are not versioned documents).
RENAMED_KEYS = {"repetitions": "rounds", "tool_cpu": "load_cpu"}


def _message(detail: ErrorDetails, root: type[BaseModel]) -> tuple[str, str]:
    """What is wrong, and what to do about it."""
    kind, context = detail["type"], detail.get("ctx", {})
    _, location = _walk(root, tuple(detail["loc"]))
    if kind == "extra_forbidden":
        parent, key = location[:-1], location[-1]
        place = f" in {_where(parent)}" if parent else ""
        if key in RENAMED_KEYS:
            return f"{key!r}{place} is now called {RENAMED_KEYS[str(key)]!r}", "rename it"
        parent_model, _ = _walk(root, tuple(detail["loc"])[:-1])
        known = ", ".join(sorted(parent_model.model_fields)) if parent_model else ""
        return f"unknown key {key!r}{place}" + (f": I know about {known}" if known else ""), "fix the file"
    if kind == "missing":
        return f"{_where(location)} is missing", "add it"
    if kind == "union_tag_invalid":
        expected = str(context.get("expected_tags", "")).replace("'", "")
        discriminator = str(context.get("discriminator", "kind")).strip("'")  # 'tool', or _role_of()
        key = re.sub(r"^_?(\w+?)(_of)?\(\)$", r"\1", discriminator)  # _role_of() -> role
        return f"{_where(location)}: {key} {context.get('tag')} is unknown", f"use one of {expected}"
    if kind == "value_error":  # a check across keys (names that must agree)
        text = str(context.get("error", detail["msg"]))
        named = location and not text.startswith(_where(location))  # a check that names its own place says it once
        return (f"{_where(location)}: {text}" if named else text), "fix the file"
    value = detail.get("input")
    shown = "" if isinstance(value, dict | list | tuple) else f" (got {value!r})"
    return f"{_where(location)}: {detail['msg'][0].lower()}{detail['msg'][1:]}{shown}", "fix the file"


def describe(error: ValidationError, root: type[BaseModel], source: Path | str) -> str:
    """One line for the first problem of a validation error: file, key, what is wrong, what to do."""
    details = error.errors()
    locations = [tuple(detail["loc"]) for detail in details]
    # A container's error that follows from an item's (a tuple left too short) is not a problem of its own.
    details = [
        d
        for d, loc in zip(details, locations, strict=True)
        if not any(other[: len(loc)] == loc and other != loc for other in locations)
    ]
    # A key by its old name also leaves its new name missing: the rename is the problem to report.
    details.sort(key=lambda d: not (d["type"] == "extra_forbidden" and d["loc"] and d["loc"][-1] in RENAMED_KEYS))
    what, advice = _message(details[0], root)
    more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
    if isinstance(source, str) and source.startswith("--"):  # a command-line option, not a file
        advice = advice.replace("fix the file", "fix the option")
    return f"{source}: {what}{more}: {advice}"


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict; a missing or broken file is a BenchError naming it."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise BenchError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as error:
        raise BenchError(f"{path}: not valid TOML ({error}): fix the file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BenchError(f"{path}: cannot be read ({error}): fix the file or its permissions") from None


def read_json(path: Path) -> Any:
    """A JSON file decoded; a missing, unreadable or broken file is a BenchError naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise BenchError(f"{path}: not UTF-8 text: restore it from git or delete the run") from None
    except json.JSONDecodeError as error:
        raise BenchError(f"{path}: not valid JSON ({error}): restore it from git or delete the run") from None
    except RecursionError:
        raise BenchError(f"{path}: JSON nested too deep to be a run: restore it from git or delete the run") from None
    except OSError as error:
        raise BenchError(f"{path}: cannot be read ({error.strerror}): check the file") from None
