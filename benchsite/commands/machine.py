"""What the machine needs beyond pip: a system built from source (`invoke byo`), hosts set up for a run across
two machines (`invoke hosts-setup`), and the wheels such a host installs from (`invoke wheels`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.builds.byo import Builder, local_path
from benchsite.harness.hosts.provision import build_wheels, set_up
from benchsite.harness.processes.signals import signals_as_interrupt
from benchsite.model.hosts import parse_hosts


def byo(name: str, source: str, repo: Path, conf: Path) -> list[str]:
    """Build a bring-your-own system (from `source`, the user's checkout, where given); what it built, in lines."""
    folder = Path(source).expanduser().resolve() if source else None
    if folder is not None and not folder.is_dir():
        raise BenchError(f"--source {source}: no such folder: pass your checkout of the system's repository")
    with signals_as_interrupt():  # Ctrl-C or a kill stops the build command too (subprocess.run kills it)
        record = Builder(repo, conf, name).build(folder)
    return [
        f"built {record.summary}",
        f"  from {record.source}",
        *(
            f"  provides {provided.provides}: {local_path(provided.path, repo)} (sha256 {provided.sha256[:12]}…)"
            for provided in record.files
        ),
    ]


def hosts_setup(hosts: str, offline: bool, repo: Path, say: Callable[[str], None]) -> None:
    """Sync the project to each host `hosts` names, install its packages and venv there."""
    placement = parse_hosts(hosts)
    if not placement.remote:
        raise BenchError("--hosts names no host: give server=user@host and/or load=user@host")
    with signals_as_interrupt():
        for role, entry in placement.roles().items():
            set_up(entry=entry, role=role, repo=repo, offline=offline, say=say)


def wheels(repo: Path) -> Path:
    """The folder of the wheels a second host installs from, built once."""
    return build_wheels(repo)


def to_stderr(line: str) -> None:
    print(line, file=sys.stderr)
