"""The steps of run.json from version 9 on (model/run_steps.py has the earlier ones and says how steps work)."""

from __future__ import annotations

import re
from typing import Any

from benchsite.model.run_steps import renamed


def _repetition_v9_to_v10(rep: dict[str, Any]) -> dict[str, Any]:
    return {**rep, "other_busy_clock": None if rep["other_busy_s"] is None else "ticks"}


def run_v9_to_v10(data: dict[str, Any]) -> dict[str, Any]:
    """Version 9 to 10: each repetition's interference says its clock (every earlier one: ticks, or None where
    none was recorded); a counting plan may set a concurrency (None before: each cell's own)."""
    profile = data["profile"]
    counting = profile["counting"]
    return {
        **data,
        "format_version": 10,
        "profile": {**profile, "counting": None if counting is None else {**counting, "concurrency": None}},
        "subjects": [
            {
                **subject,
                "cells": [
                    {**cell, "repetitions": [_repetition_v9_to_v10(rep) for rep in cell["repetitions"]]}
                    for cell in subject["cells"]
                ],
            }
            for subject in data["subjects"]
        ],
    }


_SIDE_LABEL = re.compile(r" \[([AB]): (.+)\]$")


def _variant_kind_v11(spec: str) -> str:
    """The kind of a variant as labels of version 10 showed it: checkout, dir:NAME, rev:REV, release:VERSION..."""
    kind, colon, _ = spec.partition(":")
    return kind if colon else ("pins" if "==" in spec else "checkout")


def _sweep_variants_v11(data: dict[str, Any]) -> dict[str, Any] | None:
    """A version 10 sweep's variants: each release's copies, found by the environment their origins name."""
    variants, package = [], None
    for release in data["profile"]["releases"]:
        copies, installed = {}, []
        for subject in data["subjects"]:
            origin = next((o for o in subject["origins"] if o["path"].rsplit("-", 1)[-1] == release), None)
            if origin is None or not origin["path"].startswith("{sweep}/"):
                continue
            package = origin["provides"]
            base = subject["name"].removesuffix("-" + release.replace(".", "_"))  # the one migration by name
            copies[base] = subject["name"]
            beside = origin["version"].partition("; beside it: ")[2]
            installed = [f"{package}=={release}", *(line for line in beside.split(", ") if line)]
        slug = release.replace(".", "_")
        variants.append({"name": slug, "kind": "release", "spec": f"release:{package}=={release}", "copies": copies,
                         "installed": installed, "resolved_as_of": None, "files": {}})  # fmt: skip
    return {"purpose": "sweep", "package": package, "variants": variants} if variants else None


def _ab_variants_v11(data: dict[str, Any]) -> dict[str, Any] | None:
    """A version 10 A/B run's two sides, from its copies' labels ("CherryPy framework [B: dir:loop-5]")."""
    sides: dict[str, dict[str, Any]] = {}
    for subject in data["subjects"]:
        found = _SIDE_LABEL.search(subject["label"])
        if found is None:
            continue
        side, spec = found.group(1).lower(), found.group(2)
        base = subject["name"].removesuffix(f"-{side}")  # the one migration by name
        entry = sides.setdefault(side, {"name": side, "kind": _variant_kind_v11(spec), "spec": spec, "copies": {},
                                        "installed": [], "resolved_as_of": None, "files": {}})  # fmt: skip
        entry["copies"][base] = subject["name"]
    if sorted(sides) != ["a", "b"]:
        return None
    return {"purpose": "versus", "package": None, "variants": [sides["a"], sides["b"]]}


def run_v10_to_v11(data: dict[str, Any]) -> dict[str, Any]:
    """Version 10 to 11: the run records its variants (an A/B run's sides, a sweep's releases: which copy of each
    subject ran which, and what they ran; None: a run of the checkout alone); a sweep's profile names its
    package (sweep)."""
    profile = data["profile"]
    variants = _sweep_variants_v11(data) if profile["releases"] else _ab_variants_v11(data)
    package = variants["package"] if variants and profile["releases"] else None
    return {**data, "format_version": 11, "profile": {**profile, "sweep": package}, "variants": variants}


def run_v11_to_v12(data: dict[str, Any]) -> dict[str, Any]:
    """Version 11 to 12: servers may start several times in a run (the profile's starts and its counting's: 1
    before; the run's starts: None before, one start with Python's own hash seeds)."""
    profile = {**data["profile"], "starts": 1}
    if profile["counting"] is not None:
        profile["counting"] = {**profile["counting"], "starts": 1}
    return {**data, "format_version": 12, "profile": profile, "starts": None}


def run_v12_to_v13(data: dict[str, Any]) -> dict[str, Any]:
    """Version 12 to 13: variants name their reference (side a; a sweep's newest release), not a purpose."""
    old = data["variants"]
    reference = None if old is None else old["variants"][-1]["name"] if old["purpose"] == "sweep" else "a"
    variants = None if old is None else {**renamed(old, "purpose", "reference"), "reference": reference}
    return {**data, "format_version": 13, "variants": variants}


def run_v13_to_v14(data: dict[str, Any]) -> dict[str, Any]:
    """Version 13 to 14: memory (each subject's once started, each repetition's server at its peak) and the
    open-loop latency profile (the run's, and the profile's plan of it); None in every earlier run."""
    return {
        **data,
        "format_version": 14,
        "profile": {**data["profile"], "latency": None},
        "latency": None,
        "subjects": [
            {
                **subject,
                "idle_memory": None,
                "cells": [
                    {**cell, "repetitions": [{**rep, "server_memory": None} for rep in cell["repetitions"]]}
                    for cell in subject["cells"]
                ],
            }
            for subject in data["subjects"]
        ],
    }


def run_v14_to_v15(data: dict[str, Any]) -> dict[str, Any]:
    """Version 14 to 15: profiles may bound each repetition in time and look after every round (sequential);
    no earlier run did either."""
    profile = {**data["profile"], "seconds": 0, "sequential": False, "smallest_change": 0}
    return {**data, "format_version": 15, "profile": profile}


def run_v15_to_v16(data: dict[str, Any]) -> dict[str, Any]:
    """Version 15 to 16: memory readings kept in files the run names (each repetition's memory_output, each
    subject's idle_memory_output); None in every earlier run, whose readings were not kept."""

    def cell_v16(cell: dict[str, Any]) -> dict[str, Any]:
        return {**cell, "repetitions": [{**rep, "memory_output": None} for rep in cell["repetitions"]]}

    latency = data.get("latency")
    if latency is not None:
        latency = {
            **latency,
            "subjects": [
                {**each, "loads": [{**load, "cell": cell_v16(load["cell"])} for load in each["loads"]]}
                for each in latency["subjects"]
            ],
        }
    subjects = [
        {**subject, "idle_memory_output": None, "cells": [cell_v16(cell) for cell in subject["cells"]]}
        for subject in data["subjects"]
    ]
    return {**data, "format_version": 16, "subjects": subjects, "latency": latency}
