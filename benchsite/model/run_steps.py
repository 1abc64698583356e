"""The steps of run.json from each format version to the next, pure functions of the decoded document.

Version 1 came in two shapes (before and after roles, wrk and clients); both become version 2, then 3,
and so on (model/run.py lists what each version changed). Raw outputs keep every figure they printed:
only the document's shape changes (and a machine's paths and addresses become placeholders). What a
step fills in for an old document is a frozen copy of that version's defaults, never today's.
"""

from __future__ import annotations

import re
from typing import Any

from benchsite.model.machine import fingerprint, machine_of

# The settings of version 2, each with the default a version 1 document left out.
_SETTINGS_V2_DEFAULTS: dict[str, Any] = {
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

# The profile of version 2, each key with the default a version 1 document left out (frozen: the keys later
# versions added come in their own steps).
_PROFILE_V2_DEFAULTS: dict[str, Any] = {
    "warmup_requests": 0,
    "subjects": [],
    "cells": [],
    "warmup_cells": [],
    "wrk_duration_s": 0,
    "cell_requests": {},
    "max_rounds": 0,
    "time_budget_s": 0,
}

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
    profile = {**_PROFILE_V2_DEFAULTS, **data["profile"]}
    if isinstance(profile["cell_requests"], list):  # stored as pairs
        profile["cell_requests"] = dict(profile["cell_requests"])
    upgraded = {key: value for key, value in data.items() if key != "skipped_subjects"}
    upgraded.update(
        format_version=2,
        profile=profile,
        settings={**_SETTINGS_V2_DEFAULTS, **data["settings"], "interleave": "subject"},  # the order they ran in
        warmups=data.get("warmups", []),
        subjects=[_subject_v1_to_v2(subject) for subject in data["subjects"]],
        skipped=data.get("skipped_subjects", []),
        rounds=None,
    )
    return upgraded


def _repetition_v2_to_v3(rep: dict[str, Any]) -> dict[str, Any]:
    renamed = {key: value for key, value in rep.items() if key != "tool_cpu_s"}
    return {**renamed, "load_cpu_s": rep["tool_cpu_s"]}


def _subject_v2_to_v3(subject: dict[str, Any]) -> dict[str, Any]:
    cells = [
        {**cell, "repetitions": [_repetition_v2_to_v3(r) for r in cell["repetitions"]]} for cell in subject["cells"]
    ]
    return {**subject, "origins": subject.get("origins", []), "cells": cells}


def _settings_v2_to_v3(settings: dict[str, Any]) -> dict[str, Any]:
    kept = {key: value for key, value in settings.items() if key not in ("ab_path", "wrk_path")}
    paths = {tool: settings[f"{tool}_path"] for tool in ("ab", "wrk") if settings.get(f"{tool}_path", tool) != tool}
    return {**kept, "tool_paths": paths}


NOT_RECORDED = "not recorded"


def environment_v2_to_v3(environment: dict[str, Any]) -> dict[str, Any]:
    return {**environment, "virtualization": NOT_RECORDED}  # not read before version 3


def _machine_v2_to_v3(environment: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """The machine of a run made before machines were recorded, from what its environment says,
    named by default."""
    found = fingerprint(
        cpu_model=str(environment["cpu_model"]),
        cpu_count=environment.get("cpu_count"),
        memory_gib=environment.get("memory_total_gib"),
        kernel=str(environment["kernel"]),
        virtualization=NOT_RECORDED,
        server_cpu=settings.get("server_cpu"),
        load_cpu=settings.get("tool_cpu"),
    )
    return machine_of(found).to_json()


def _topology_v2_to_v3(topology: dict[str, Any] | None, settings: dict[str, Any]) -> dict[str, Any] | None:
    """Each host by its machine; its SSH login and address are dropped (they never belonged in data/)."""
    if topology is None:
        return None
    return {
        role: {
            "role": host["role"],
            "environment": environment_v2_to_v3(host["environment"]),
            "machine": _machine_v2_to_v3(host["environment"], settings),
        }
        for role, host in topology.items()
    }


def _skipped_v2_to_v3(skipped: dict[str, Any]) -> dict[str, Any]:
    """A skipped subject's detail without the SSH login it named (version 2 wrote "(on the server host
    root@10.0.0.2)")."""
    return {
        **skipped,
        "detail": re.sub(r" \(on the (server|load) host [^)\s]+\)", r" (on the \1 host)", skipped["detail"]),
    }


def run_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 to 3: every field explicit, load_cpu_s, tool_paths, machines, no SSH logins."""
    return {
        **data,
        "format_version": 3,
        "settings": _settings_v2_to_v3(data["settings"]),
        "subjects": [_subject_v2_to_v3(subject) for subject in data["subjects"]],
        "skipped": [_skipped_v2_to_v3(skipped) for skipped in data["skipped"]],
        "environment": environment_v2_to_v3(data["environment"]),
        "machine": _machine_v2_to_v3(data["environment"], data["settings"]),
        "topology": _topology_v2_to_v3(data.get("topology"), data["settings"]),  # absent: one machine
    }


def run_v3_to_v4(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 to 4: every repetition's server CPU came from clock ticks; no precision target; the
    rounds did not say where each claim stood."""
    subjects = [
        {
            **subject,
            "cells": [
                {**cell, "repetitions": [{**rep, "server_cpu_clock": "ticks"} for rep in cell["repetitions"]]}
                for cell in subject["cells"]
            ],
        }
        for subject in data["subjects"]
    ]
    rounds = data["rounds"]
    return {
        **data,
        "format_version": 4,
        "subjects": subjects,
        "profile": {**data["profile"], "target_half_width": 0},
        "rounds": None if rounds is None else {**rounds, "claims": {}},
    }


def run_v4_to_v5(data: dict[str, Any]) -> dict[str, Any]:
    """Version 4 to 5: profiles gained release sweeps; earlier runs swept none (the first sweep runs, written
    as version 4, already name theirs)."""
    return {
        **data,
        "format_version": 5,
        "profile": {**data["profile"], "releases": data["profile"].get("releases", [])},
    }


def run_v5_to_v6(data: dict[str, Any]) -> dict[str, Any]:
    """Version 5 to 6: instructions per request came in, and the kernel's part of each repetition's server
    CPU; earlier runs counted none, planned none and split nothing. An environment value a failed collector
    left as an exception's name becomes "not recorded" (the commit of those runs cannot be recovered)."""
    subjects = [
        {
            **subject,
            "cells": [
                {**cell, "repetitions": [{**rep, "server_system_s": None} for rep in cell["repetitions"]]}
                for cell in subject["cells"]
            ],
        }
        for subject in data["subjects"]
    ]
    environment = {  # a failed collector's exception name ("unknown (CalledProcessError)") says nothing to a reader
        key: NOT_RECORDED if isinstance(value, str) and re.fullmatch(r"unknown \(\w+\)", value) else value
        for key, value in data["environment"].items()
    }
    return {
        **data,
        "format_version": 6,
        "environment": environment,
        "subjects": subjects,
        "profile": {**data["profile"], "counting": None},
        "counting": None,
    }


# The interference rule of version 7, as its settings' defaults were when it came in (frozen: a later change
# of the defaults must not re-judge the runs this step upgrades).
_INTERFERENCE_V7: dict[str, float] = {
    "disturbed_share": 0.25,
    "disturbed_floor_s": 0.1,
    "busy_share": 0.25,
    "settle_wait_s": 30.0,
}


def _disturbed_v7(rep: dict[str, Any]) -> bool:
    """Whether version 7's default rule calls a repetition disturbed (never one that recorded nothing)."""
    if rep.get("other_busy_s") is None:
        return False
    interference = rep["other_busy_s"] + (rep.get("steal_s") or 0.0)
    share, floor = _INTERFERENCE_V7["disturbed_share"], _INTERFERENCE_V7["disturbed_floor_s"]
    return bool(interference > floor and interference > share * rep["wall_s"])


def run_v6_to_v7(data: dict[str, Any]) -> dict[str, Any]:
    """Version 6 to 7: interference acted on. Each repetition is judged by version 7's default rule, which
    the settings now carry; earlier runs made no pre-run check and accepted no busy run."""
    subjects = [
        {
            **subject,
            "cells": [
                {**cell, "repetitions": [{**rep, "disturbed": _disturbed_v7(rep)} for rep in cell["repetitions"]]}
                for cell in subject["cells"]
            ],
        }
        for subject in data["subjects"]
    ]
    return {
        **data,
        "format_version": 7,
        "settings": {**data["settings"], **_INTERFERENCE_V7},
        "subjects": subjects,
        "machine_check": None,
        "accepted_busy": False,
    }


def renamed(table: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """A table with one key renamed, in its place."""
    return {(new if key == old else key): value for key, value in table.items()}


def run_v8_to_v9(data: dict[str, Any]) -> dict[str, Any]:
    """Version 8 to 9: the same document; the file stores its repetitions as columns (model/columns.py)."""
    return {**data, "format_version": 9}


def run_v7_to_v8(data: dict[str, Any]) -> dict[str, Any]:
    """Version 7 to 8: the profile's `repetitions` is its `rounds`, the settings' `tool_cpu` their `load_cpu`."""
    return {
        **data,
        "format_version": 8,
        "profile": renamed(data["profile"], "repetitions", "rounds"),
        "settings": renamed(data["settings"], "tool_cpu", "load_cpu"),
    }
