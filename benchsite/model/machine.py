"""The machine a run was made on: a name its owner gives, and a fingerprint the harness reads.

Runs from many machines live side by side under data/: pages pool the runs of each machine and
never join numbers across machines. A machine is known by a short id computed from the parts of
its fingerprint that stay put from day to day (CPU model and count, memory, kernel series, CPU
pinning); the whole fingerprint and the owner's words are kept beside it. Hand-edited fields are
found out: the id must be the fingerprint's.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Annotated

from pydantic import StringConstraints, model_validator

from benchsite.records import Name, Record, read_toml

MachineId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8}$")]


class Fingerprint(Record):
    """What the harness reads of a machine."""

    cpu_model: str
    cpu_count: int | None
    memory_gib: int | None  # rounded to whole GiB
    kernel_series: str  # major.minor: a patched kernel is the same machine
    virtualization: str  # what it runs under (e.g. "kvm"), "none", or "not recorded" for old runs
    pinning: str  # "server CPU 0, load CPU 1", or "none"

    @property
    def machine_id(self) -> str:
        """Eight hex digits from the stable parts (virtualization is kept beside, not in the id: the first
        runs did not record it)."""
        stable = self.model_dump(exclude={"virtualization"})
        return hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:8]

    @property
    def default_name(self) -> str:
        """A name from the CPU model and count, for a machine its owner did not name: amd-epyc-2cpu."""
        words = re.sub(r"\(r\)|\(tm\)|cpu|@.*", " ", self.cpu_model.lower())
        slug = re.sub(r"[^a-z0-9]+", "-", words).strip("-")[:40].strip("-") or "machine"
        return f"{slug}-{self.cpu_count or 0}cpu"

    @property
    def described(self) -> str:
        """The fingerprint in words."""
        cpus = f"{self.cpu_count} CPUs" if self.cpu_count else "CPUs unknown"
        memory = f"{self.memory_gib} GiB" if self.memory_gib is not None else "memory unknown"
        return (
            f"{self.cpu_model}, {cpus}, {memory}, kernel {self.kernel_series}, "
            f"virtualization {self.virtualization}, pinning {self.pinning}"
        )


class Machine(Record):
    """A run's machine: its id, the name and words its owner gave, and its fingerprint."""

    id: MachineId
    name: Name
    description: str
    fingerprint: Fingerprint

    @model_validator(mode="after")
    def _id_matches(self) -> Machine:
        if self.id != self.fingerprint.machine_id:
            raise ValueError(
                f"machine id {self.id} is not its fingerprint's ({self.fingerprint.machine_id}): "
                "its machine fields disagree; restore the run from git"
            )
        return self


def kernel_series(kernel: str) -> str:
    """6.18.44-fc-v657 -> 6.18."""
    found = re.match(r"(\d+\.\d+)", kernel)
    return found.group(1) if found else kernel


def pinning_of(server_cpu: int | None, load_cpu: int | None) -> str:
    return "none" if server_cpu is None else f"server CPU {server_cpu}, load CPU {load_cpu}"


def fingerprint(
    cpu_model: str,
    cpu_count: int | None,
    memory_gib: float | str | None,
    kernel: str,
    virtualization: str,
    server_cpu: int | None,
    load_cpu: int | None,
) -> Fingerprint:
    """A fingerprint from what a run's environment and settings say."""
    return Fingerprint(
        cpu_model=cpu_model,
        cpu_count=cpu_count,
        memory_gib=round(memory_gib) if isinstance(memory_gib, int | float) else None,
        kernel_series=kernel_series(kernel),
        virtualization=virtualization,
        pinning=pinning_of(server_cpu, load_cpu),
    )


def machine_of(fingerprint: Fingerprint, name: str | None = None, description: str = "") -> Machine:
    """The machine record for a fingerprint, named by its owner or by default."""
    return Machine(
        id=fingerprint.machine_id,
        name=name or fingerprint.default_name,
        description=description or fingerprint.described,
        fingerprint=fingerprint,
    )


MACHINE_CONF = "machine.toml"  # conf/machine.toml: this machine's name and description (git ignores it)


class MachineConf(Record):
    """conf/machine.toml: how its owner names this machine on the pages."""

    name: Name
    description: str = ""


def naming(given: str, conf_dir: Path) -> MachineConf | None:
    """The name a run's machine goes by: `--machine NAME`, else conf/machine.toml, else none (the default)."""
    if given:
        return MachineConf.from_json({"name": given}, "--machine")
    path = conf_dir / MACHINE_CONF
    return MachineConf.from_json(read_toml(path), path) if path.is_file() else None
