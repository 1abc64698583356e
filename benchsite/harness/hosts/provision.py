"""Set up a host for runs over SSH: the project's files synced, system packages, the venv.

`invoke hosts-setup` does, on each host given: copy the project's files (what git tracks or would
track, less data/, docs/ and tests/) into the host's project folder; install the system packages of
conf/apt-packages.txt that are missing there (as root); make `.venv` and install what a host runs into it
(conf/requirements-host.txt: requirements.txt less the site and the tests), from PyPI or, for a host with no
way out, from wheels built here and copied over (kept in the user's cache, one wheelhouse per set of pins).
A host whose requirements are already installed is left as it is. Modules are compiled when first
imported, not at install (half the install's time).
"""

from __future__ import annotations

import functools
import hashlib
import json
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from fabric import Connection

from benchsite.errors import BenchError
from benchsite.harness.basics.environment import git_commit, utc_now
from benchsite.harness.basics.sync import SYNC_RECORD, project_digest, project_files
from benchsite.harness.hosts.remote import connect
from benchsite.harness.processes.signals import checkpoint
from benchsite.model.hosts import HostEntry
from benchsite.usercache import user_cache

HOST_REQUIREMENTS = "conf/requirements-host.txt"
REQUIREMENTS = (HOST_REQUIREMENTS, "conf/requirements-nodeps.txt")
INSTALLED_STAMP = ".venv/.benchsite-requirements"
WHEELHOUSE = "build/wheelhouse"  # on the host
COMPLETE = ".complete"  # in a wheelhouse here: every pinned requirement's wheel is in it


def _remote(connection: Connection, command: str, what: str, entry: HostEntry) -> str:
    """Run a shell command on the host; a failure is one line with the command's last words. In a pseudo-
    terminal, so that a Ctrl-C here reaches it there (Fabric sends one down the terminal): without one, Fabric
    waits for the command to end, a minute of pip install on a slow host."""
    result = connection.run(command, hide=True, warn=True, in_stream=False, pty=True)
    checkpoint()  # Fabric keeps waiting after it passes a Ctrl-C on: one the host missed still stops us here
    if not result.ok:
        lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
        raise BenchError(
            f"{what} failed on {entry.ssh} (exit {result.exited}: {lines[-1] if lines else 'no message'}): "
            f"run it there by hand to see why: {command}"
        )
    return str(result.stdout)


def sync(connection: Connection, entry: HostEntry, repo: Path) -> int:
    """Copy the project's files into the host's project folder; returns how many."""
    files = project_files(repo)
    record = {
        "commit": git_commit(repo),
        "synced_at": utc_now(),
        "files": len(files),
        "digest": project_digest(repo, files),
    }
    with tempfile.TemporaryDirectory(prefix="benchsite-sync-") as scratch:
        archive = Path(scratch) / "project.tar.gz"
        (Path(scratch) / SYNC_RECORD).write_text(json.dumps(record, indent=1) + "\n")
        with tarfile.open(archive, "w:gz") as tar:
            for name in files:
                tar.add(repo / name, arcname=name)
            tar.add(Path(scratch) / SYNC_RECORD, arcname=SYNC_RECORD)
        folder = shlex.quote(entry.dir)
        _remote(connection, f"mkdir -p {folder}", "making the project folder", entry)
        target = f"{entry.dir}/.benchsite-sync.tar.gz"
        connection.put(str(archive), remote=target)
        _remote(
            connection,
            f"tar -xzf {shlex.quote(target)} -C {folder} && rm {shlex.quote(target)}",
            "unpacking the project",
            entry,
        )
    return len(files)


def install_system_packages(connection: Connection, entry: HostEntry, repo: Path) -> list[str]:
    """Install the packages of conf/apt-packages.txt missing on the host (root only); returns them."""
    wanted = (repo / "conf" / "apt-packages.txt").read_text().split()
    listing = connection.run(
        "dpkg-query -W -f '${db:Status-Status} ${Package}\\n' " + " ".join(wanted),
        hide=True,
        warn=True,
        in_stream=False,
    ).stdout
    installed = {line.split()[1] for line in listing.splitlines() if line.startswith("installed ")}
    missing = [name for name in wanted if name not in installed]
    if not missing:
        return []
    user = _remote(connection, "id -u", "asking who we are", entry).strip()
    if user != "0":
        raise BenchError(
            f"{entry.ssh} lacks the system packages {' '.join(missing)}: install them there as root "
            f"(apt-get install -y {' '.join(missing)}), then run hosts-setup again"
        )
    _remote(
        connection,
        "DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive "
        f"apt-get install -y -q {' '.join(missing)}",
        "installing system packages",
        entry,
    )
    return missing


def requirements_digest(repo: Path) -> str:
    digest = hashlib.sha256()
    for name in REQUIREMENTS:
        digest.update((repo / name).read_bytes())
    return digest.hexdigest()


def wheel_cache(repo: Path) -> Path:
    """Where the wheels of this checkout's pins are kept here: the user's cache, one folder per set of pins."""
    return user_cache() / f"wheelhouse-{requirements_digest(repo)[:16]}"


@functools.cache
def build_wheels(repo: Path) -> Path:
    """Wheels of every pinned requirement, built here (from pip's cache where it has them) once per set of
    pins; the wheelhouses of other pins are removed when a new one is complete."""
    wheelhouse = wheel_cache(repo)
    if (wheelhouse / COMPLETE).exists():
        return wheelhouse
    wheelhouse.mkdir(parents=True, exist_ok=True)
    for argv in (
        ["-r", HOST_REQUIREMENTS],
        ["--no-deps", "-r", "conf/requirements-nodeps.txt"],
    ):
        result = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(wheelhouse), *argv],
            cwd=repo,
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            lines = [line for line in result.stderr.splitlines() if line.strip()]
            raise BenchError(f"building wheels here failed ({lines[-1] if lines else 'no message'})")
    (wheelhouse / COMPLETE).touch()
    for other in wheelhouse.parent.glob("wheelhouse-*"):
        if other != wheelhouse:
            shutil.rmtree(other, ignore_errors=True)
    return wheelhouse


def copy_wheels(connection: Connection, entry: HostEntry, wheelhouse: Path) -> int:
    """Copy the wheels the host does not have yet; returns how many were copied."""
    folder = f"{entry.dir}/{WHEELHOUSE}"
    _remote(connection, f"mkdir -p {shlex.quote(folder)}", "making the wheel folder", entry)
    there = set(_remote(connection, f"ls {shlex.quote(folder)}", "listing the wheels", entry).split())
    copied = 0
    for wheel in sorted(wheelhouse.glob("*.whl")):
        if wheel.name not in there:
            connection.put(str(wheel), remote=f"{folder}/{wheel.name}")
            copied += 1
    return copied


def requirements_installed(connection: Connection, entry: HostEntry, repo: Path) -> bool:
    """Whether the host's .venv already holds the pinned requirements of this project's files."""
    folder = shlex.quote(entry.dir)
    stamp = connection.run(f"cat {folder}/{INSTALLED_STAMP}", hide=True, warn=True, in_stream=False).stdout.strip()
    return stamp == requirements_digest(repo)


def install_requirements(connection: Connection, entry: HostEntry, repo: Path, offline: bool) -> None:
    """Make .venv and install the pinned requirements into it."""
    folder = shlex.quote(entry.dir)
    source = f"--no-index --find-links {WHEELHOUSE}" if offline else ""
    _remote(
        connection,
        f"cd {folder} && (test -x .venv/bin/pip || python3 -m venv --clear .venv) "  # pip comes last: a venv whole
        f"&& .venv/bin/pip install -q --no-compile {source} -r {HOST_REQUIREMENTS} "
        f"&& .venv/bin/pip install -q --no-compile --no-deps {source} -r conf/requirements-nodeps.txt "
        f"&& echo {requirements_digest(repo)} > {INSTALLED_STAMP}",
        "installing the Python requirements",
        entry,
    )


def set_up(entry: HostEntry, role: str, repo: Path, offline: bool, say: Callable[[str], None]) -> None:
    """Sync, install system packages, and install the venv on one host."""
    connection = connect(entry, role)
    with connection:
        say(f"{role} host {entry.ssh}: {sync(connection, entry, repo)} files synced into {entry.dir}")
        installed = install_system_packages(connection, entry, repo)
        say(
            f"{role} host {entry.ssh}: "
            + (f"installed {' '.join(installed)}" if installed else "system packages present")
        )
        if requirements_installed(connection, entry, repo):
            say(f"{role} host {entry.ssh}: requirements already installed")
            return
        if offline:
            wheels = build_wheels(repo)
            say(f"{role} host {entry.ssh}: {copy_wheels(connection, entry, wheels)} wheels copied")
        install_requirements(connection, entry, repo, offline)
        say(f"{role} host {entry.ssh}: requirements installed")
