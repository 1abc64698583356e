"""Upgrades of stored documents to the current format, one version step at a time.

Version 1 of run.json came in two shapes (before and after roles, wrk and clients); both
become version 2 here. Raw outputs are never touched: only the document's shape changes.
`invoke upgrade-data` writes the upgraded documents back in place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsite.errors import BenchError
from benchsite.model.recipe import PROFILE_DEFAULTS, SETTINGS_DEFAULTS

# Version 1 called a server under test "subject" and a backend "server".
_ROLES_V1 = {"subject": "server", "server": "backend", "ceiling": "ceiling", "client": "client"}


def _cell_v1_to_v2(cell: dict[str, Any]) -> dict[str, Any]:
    tool = cell["tool"]
    common = {
        "tool": tool,
        "name": cell["name"],
        "label": cell["label"],
        "repetitions": [_repetition_v1_to_v2(rep, tool) for rep in cell["repetitions"]],
    }
    if tool == "wrk":
        return {**common, "connections": cell["concurrency"], "duration_s": cell["duration_s"]}
    if tool == "client":
        return {**common, "requests": cell["requests"]}
    return {**common, "concurrency": cell["concurrency"], "keepalive": cell["keepalive"], "requests": cell["requests"]}


def _repetition_v1_to_v2(rep: dict[str, Any], tool: str) -> dict[str, Any]:
    result = rep["result"]
    if isinstance(result, dict) and "tool" not in result:
        result = {**result, "tool": tool}  # the first runs stored ab results untagged
    return {
        **rep,
        "result": result,
        "backend_cpu_s": rep.get("backend_cpu_s", {}),
        "started_after_s": None,
        "steal_s": None,
        "other_busy_s": None,
    }


def _subject_v1_to_v2(subject: dict[str, Any]) -> dict[str, Any]:
    role = _ROLES_V1[subject.get("role", "subject")]
    return {
        **subject,
        "role": role,
        "keeps_http10_alive": subject.get("keeps_http10_alive"),
        "verification": subject["verification"] or None,  # {} meant "not verified over HTTP"
        "cells": [_cell_v1_to_v2(cell) for cell in subject["cells"]],
    }


def run_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 (either shape) to version 2: typed cells and roles, every key explicit."""
    profile = {**PROFILE_DEFAULTS, **data["profile"]}
    if isinstance(profile["cell_requests"], list):  # stored as pairs
        profile["cell_requests"] = dict(profile["cell_requests"])
    upgraded = {key: value for key, value in data.items() if key != "skipped_subjects"}
    upgraded.update(
        format_version=2,
        profile=profile,
        settings={**SETTINGS_DEFAULTS, **data["settings"], "interleave": "subject"},  # the order they ran in
        warmups=data.get("warmups", []),
        subjects=[_subject_v1_to_v2(subject) for subject in data["subjects"]],
        skipped=data.get("skipped_subjects", []),
        rounds=None,
    )
    return upgraded


def upgrade_run(data: Any, source: Path) -> Any:
    """A decoded run.json brought to the current version; an unknown version says what to do."""
    from benchsite.model.run import FORMAT_VERSION

    version = data.get("format_version") if isinstance(data, dict) else None
    if version == FORMAT_VERSION:
        return data
    if version == 1:
        try:
            return run_v1_to_v2(data)
        except (KeyError, TypeError, AttributeError) as error:
            raise BenchError(
                f"{source}: a version 1 document without {error} cannot be upgraded: "
                "restore it from git or re-run the recipe"
            ) from None
    raise BenchError(
        f"{source}: data format version {version!r}, but this harness reads versions 1 and "
        f"{FORMAT_VERSION}: update the harness (git pull) or re-run the recipe"
    )


def overhead_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 of overhead.json: the same figures; the medians it stored are derived, not stored."""
    dropped = ("harness_rps_median", "bare_rps_median", "difference_percent")
    environment = {"debian_packages": "not recorded", **data["environment"]}  # collected since the runs
    return {**{k: v for k, v in data.items() if k not in dropped}, "environment": environment, "format_version": 2}


def upgrade_overhead(data: Any, source: Path) -> Any:
    from benchsite.model.overhead import OVERHEAD_FORMAT_VERSION

    version = data.get("format_version") if isinstance(data, dict) else None
    if version == OVERHEAD_FORMAT_VERSION:
        return data
    if version == 1:
        try:
            return overhead_v1_to_v2(data)
        except (KeyError, TypeError) as error:
            raise BenchError(
                f"{source}: a version 1 document without {error} cannot be upgraded: re-run `.venv/bin/invoke overhead`"
            ) from None
    raise BenchError(
        f"{source}: format version {version!r}, but this harness reads 1 and "
        f"{OVERHEAD_FORMAT_VERSION}: update the harness or re-run `.venv/bin/invoke overhead`"
    )
