"""The machine and software a run happened on: small best-effort collectors."""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TypeVar

import psutil

from benchsite.harness.basics.sync import sync_record
from benchsite.model.run import Environment

T = TypeVar("T")


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _os_name() -> str:
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.system()


def git_commit(repo: Path) -> str:
    """The commit of the harness (and whether it had changes); on a synced host, the commit it came from."""
    record = sync_record(repo)
    if record is not None:
        return f"{record['commit']} (synced by invoke hosts-setup at {record['synced_at']})"
    found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True)
    if found.returncode != 0:  # not a checkout, or git refuses it (another user's folder): say what git said
        said = (found.stderr.strip().splitlines() or ["no message"])[0].removeprefix("fatal: ")
        return f"{NOT_RECORDED} (git: {said})"
    commit = found.stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    return commit + (" (with uncommitted changes)" if dirty else "")


def tool_version(argv: list[str]) -> str:
    """The first line a tool prints about its version (ab -V, wrk --version)."""
    result = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    output = (result.stdout or result.stderr).strip()
    return output.splitlines()[0] if output else "unknown"


def package_versions(names: list[str]) -> dict[str, str]:
    """Installed versions of the named distributions ("not installed" when absent)."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def debian_package_versions(names: list[str]) -> dict[str, str]:
    """Versions of Debian packages as dpkg knows them ("not installed" when absent)."""
    versions = {}
    for name in names:
        result = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", name], capture_output=True, text=True)
        versions[name] = result.stdout.strip() if result.returncode == 0 and result.stdout.strip() else "not installed"
    return versions


def virtualization() -> str:
    """What the machine runs under: systemd-detect-virt's answer ("kvm", "none"...), else whether the CPU
    says a hypervisor is there."""
    try:
        found = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        found = ""
    if found:
        return found
    flags = Path("/proc/cpuinfo").read_text(errors="replace")
    return "a hypervisor (unnamed)" if re.search(r"^flags\s*:.*\bhypervisor\b", flags, re.M) else "none"


NOT_RECORDED = "not recorded"


def _best_effort(collect: Callable[[], T]) -> T | str:
    """Run one collector; a failure is recorded in words (never an exception's name), never raised."""
    try:
        return collect()
    except Exception as error:
        return f"{NOT_RECORDED} ({str(error).splitlines()[0] if str(error) else 'the collector failed'})"


def collect_environment(
    repo: Path, packages: list[str], tools: dict[str, list[str]], debian_packages: tuple[str, ...] = ("apache2-utils",)
) -> Environment:
    """Everything about the machine a page's reader needs to weigh the numbers."""
    return Environment(
        cpu_model=_best_effort(_cpu_model),
        cpu_count=os.cpu_count(),
        memory_total_gib=_best_effort(lambda: round(psutil.virtual_memory().total / 2**30, 1)),
        os=_best_effort(_os_name),
        kernel=platform.release(),
        python=f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        load_average_at_start=_best_effort(lambda: tuple(round(x, 2) for x in os.getloadavg())),
        git_commit=_best_effort(lambda: git_commit(repo)),
        tools={name: _best_effort(functools.partial(tool_version, argv)) for name, argv in tools.items()},
        packages=package_versions(packages),
        debian_packages=_best_effort(lambda: debian_package_versions(list(debian_packages))),
        virtualization=_best_effort(virtualization),
    )


def utc_now() -> str:
    """An ISO 8601 UTC timestamp, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()
