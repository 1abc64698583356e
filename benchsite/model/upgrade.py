"""Upgrades of stored documents to the current format, one version step at a time, and reading them.

Every record file's steps are registered here: run.json (its steps in model/run_steps.py),
overhead.json, published.toml and the method's records. `invoke upgrade-data` (results/upgrading.py)
writes the upgraded documents back in place.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchsite.errors import BenchError
from benchsite.model.columns import read_form
from benchsite.model.method import METHOD_FORMAT_VERSION, MethodRecord
from benchsite.model.overhead import OVERHEAD_FORMAT_VERSION, OverheadRecord
from benchsite.model.run import FORMAT_VERSION, RunDocument
from benchsite.model.run_steps import (
    environment_v2_to_v3,
    renamed,
    run_v1_to_v2,
    run_v2_to_v3,
    run_v3_to_v4,
    run_v4_to_v5,
    run_v5_to_v6,
    run_v6_to_v7,
    run_v7_to_v8,
    run_v8_to_v9,
)
from benchsite.model.run_steps_since_v10 import (
    run_v9_to_v10,
    run_v10_to_v11,
    run_v11_to_v12,
    run_v12_to_v13,
    run_v13_to_v14,
    run_v14_to_v15,
    run_v15_to_v16,
)
from benchsite.records import read_toml

# Each step takes a document of its version to the next one.
Step = Callable[[dict[str, Any]], dict[str, Any]]
_RUN_STEPS: dict[int, Step] = {
    1: run_v1_to_v2,
    2: run_v2_to_v3,
    3: run_v3_to_v4,
    4: run_v4_to_v5,
    5: run_v5_to_v6,
    6: run_v6_to_v7,
    7: run_v7_to_v8,
    8: run_v8_to_v9,
    9: run_v9_to_v10,
    10: run_v10_to_v11,
    11: run_v11_to_v12,
    12: run_v12_to_v13,
    13: run_v13_to_v14,
    14: run_v14_to_v15,
    15: run_v15_to_v16,
}


def _upgraded(data: Any, source: Path, steps: dict[int, Step], current: int, redo: str) -> Any:
    """A decoded document brought to the current version one step at a time; an unknown version, or a
    document a step cannot read, is one line saying what to do."""
    version = data.get("format_version") if isinstance(data, dict) else None
    if version != current and version not in steps:
        raise BenchError(
            f"{source}: data format version {version!r}, but this harness reads versions 1 to {current}: "
            f"update the harness (git pull) or {redo}"
        )
    while version != current:
        try:
            data = steps[version](data)
        except (KeyError, TypeError, AttributeError) as error:
            raise BenchError(
                f"{source}: a version {version} document without {error} cannot be upgraded: "
                f"restore it from git or {redo}"
            ) from None
        version = data["format_version"]
    return data


def upgrade_run(data: Any, source: Path) -> Any:
    """A decoded run.json brought to the current version."""
    return _upgraded(data=data, source=source, steps=_RUN_STEPS, current=FORMAT_VERSION, redo="re-run the recipe")


def read_run(data: Any, source: Path) -> RunDocument:
    """A decoded run.json of any known version (its repetitions as columns or as rows), upgraded and
    validated."""
    try:
        rows = read_form(data)
    except BenchError as error:
        raise BenchError(f"{source}: {error}") from None
    return RunDocument.from_json(upgrade_run(rows, source), source)


def overhead_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 of overhead.json: the same figures; the medians it stored are derived, not stored."""
    dropped = ("harness_rps_median", "bare_rps_median", "difference_percent")
    environment = {"debian_packages": "not recorded", **data["environment"]}  # collected since the runs
    return {**{k: v for k, v in data.items() if k not in dropped}, "environment": environment, "format_version": 2}


def overhead_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "environment": environment_v2_to_v3(data["environment"]), "format_version": 3}


def overhead_v3_to_v4(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "settings": renamed(data["settings"], "tool_cpu", "load_cpu"), "format_version": 4}


_OVERHEAD_STEPS: dict[int, Step] = {1: overhead_v1_to_v2, 2: overhead_v2_to_v3, 3: overhead_v3_to_v4}


def upgrade_overhead(data: Any, source: Path) -> Any:
    """A decoded overhead.json brought to the current version."""
    return _upgraded(
        data=data,
        source=source,
        steps=_OVERHEAD_STEPS,
        current=OVERHEAD_FORMAT_VERSION,
        redo="re-run `.venv/bin/invoke overhead`",
    )


def read_overhead(data: Any, source: Path) -> OverheadRecord:
    """A decoded overhead.json of any known version, upgraded and validated."""
    return OverheadRecord.from_json(upgrade_overhead(data, source), source)


# published.toml
# 1  the first transcriptions; a claim's metric "cpu" for the client's CPU per request
# 2  metrics by the registry's names ("load-cpu")
PUBLISHED_FORMAT_VERSION = 2


def published_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 named the client's CPU per request "cpu"; the metric registry calls it "load-cpu"."""
    claims = [
        {**claim, "metric": "load-cpu"} if isinstance(claim, dict) and claim.get("metric") == "cpu" else claim
        for claim in data.get("claims", [])
    ]
    return {**data, "format_version": 2, "claims": claims}


_PUBLISHED_STEPS: dict[int, Step] = {1: published_v1_to_v2}


def upgrade_published(data: Any, source: Path) -> Any:
    """A decoded published.toml brought to the current version."""
    return _upgraded(
        data=data, source=source, steps=_PUBLISHED_STEPS, current=PUBLISHED_FORMAT_VERSION, redo="restore it from git"
    )


# data/method/*.toml: version 1 is the only one so far.
_METHOD_STEPS: dict[int, Step] = {}


def upgrade_method(data: Any, source: Path) -> Any:
    """A decoded method record brought to the current version."""
    return _upgraded(
        data=data, source=source, steps=_METHOD_STEPS, current=METHOD_FORMAT_VERSION, redo="restore it from git"
    )


def read_method(path: Path) -> MethodRecord:
    """A method record of any known version, upgraded and validated."""
    return MethodRecord.from_json(upgrade_method(read_toml(path), path), path)
