"""`invoke upgrade-data`: every record file below data/ rewritten in the current format, in place.

The steps themselves live in model/upgrade.py; this module finds the files and writes them back:
run.json and overhead.json as sorted JSON with the machine's paths replaced, published.toml and the
method's records as TOML that keeps its comments and layout where a value did not change.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from benchsite.errors import BenchError
from benchsite.model.columns import read_form, stored_form
from benchsite.model.method import METHOD_DIR
from benchsite.model.overhead import OVERHEAD_FILE
from benchsite.model.portable import inferred_placeholders
from benchsite.model.run import RUN_FILE
from benchsite.model.upgrade import read_overhead, read_run, upgrade_method, upgrade_published
from benchsite.records import read_json, read_toml
from benchsite.results.integrity import reparse_mismatches
from benchsite.results.published import PUBLISHED_FILE, PublishedFile
from benchsite.results.store import make_files_portable, write_portable


def upgrade_data_dir(data_dir: Path) -> list[tuple[Path, str]]:
    """Rewrite every record file below data_dir in the current format; return what was rewritten and why."""
    upgraded = [*_upgraded_json(data_dir)]
    for pattern, upgrade in ((f"**/{PUBLISHED_FILE}", _published), (f"{METHOD_DIR}/*.toml", upgrade_method)):
        for path in sorted(data_dir.glob(pattern)):
            said = _upgraded_toml(path, upgrade)
            if said:
                upgraded.append((path, said))
    return upgraded


def _published(data: Any, path: Path) -> Any:
    """A published.toml upgraded, then checked against its record (a broken file is not written)."""
    current = upgrade_published(data, path)
    PublishedFile.from_json(current, path)
    return current


def _upgraded_json(data_dir: Path) -> list[tuple[Path, str]]:
    upgraded: list[tuple[Path, str]] = []
    documents = sorted(data_dir.glob(f"**/{RUN_FILE}")) + sorted(data_dir.glob(f"**/{OVERHEAD_FILE}"))
    for path in documents:
        text = path.read_text(encoding="utf-8")
        data = read_json(path)
        if path.name == RUN_FILE:
            run = read_run(data, path).stored_at(path.parent)
            mismatches = reparse_mismatches(run)
            if mismatches:
                raise BenchError(f"{path}: {mismatches[0]} (and {len(mismatches) - 1} more): restore the run from git")
            current = stored_form(run.to_json())  # as the file stores it, to compare with what it holds
        else:
            current = read_overhead(data, path).to_json()
        placeholders = inferred_placeholders(text)
        files = make_files_portable(path.parent, placeholders)
        if current == data and not placeholders:
            if files:
                upgraded.append((path.parent, f"machine paths replaced in {files} files beside {path.name}"))
            continue
        write_portable(path, read_form(current) if path.name == RUN_FILE else current, placeholders)
        old = data.get("format_version") if isinstance(data, dict) else None
        replaced = ", machine paths replaced" if placeholders or files else ""
        upgraded.append((path, f"from format version {old}{replaced}"))
    return upgraded


def _upgraded_toml(path: Path, upgrade: Callable[[Any, Path], Any]) -> str:
    """Rewrite one TOML record if its upgrade changes it; "" if it was current."""
    data = read_toml(path)
    current = upgrade(data, path)
    if current == data:
        return ""
    try:
        document = tomlkit.parse(path.read_text(encoding="utf-8"))
    except TOMLKitError as error:
        raise BenchError(f"{path}: not valid TOML ({error}): fix the file") from None
    _merge(document, current)
    temporary = path.with_name(path.name + ".tmp")
    try:
        temporary.write_text(tomlkit.dumps(document), encoding="utf-8")
        temporary.replace(path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise BenchError(f"cannot write {path} ({error.strerror}): free some space or fix the permissions") from None
    return f"from format version {data.get('format_version')!r}"


def _merge(document: Any, current: Any) -> None:
    """Bring a parsed TOML document (tables and arrays) to `current`, touching only the values that differ."""
    if isinstance(current, dict):
        for key in [key for key in document if key not in current]:
            del document[key]
        for key, value in current.items():
            if key in document and _same_shape(document[key], value):
                _merge(document[key], value)
            elif key not in document or document[key] != value:
                document[key] = value
    else:
        for index, value in enumerate(current):
            if _same_shape(document[index], value):
                _merge(document[index], value)
            elif document[index] != value:
                document[index] = value


def _same_shape(old: Any, new: Any) -> bool:
    """Both tables, or both arrays of one length: merged item by item rather than replaced."""
    if isinstance(old, dict) and isinstance(new, dict):
        return True
    return isinstance(old, list) and isinstance(new, list) and len(old) == len(new)
