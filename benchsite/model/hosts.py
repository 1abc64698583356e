"""Where a run's roles go: `--hosts server=user@host,load=user@host` or a `[hosts]` table in a TOML file.

Each role left out stays on this machine. A host entry names how to reach it over SSH, the address
its servers listen on (or the load tool aims at), and the project folder there.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from benchsite.errors import BenchError
from benchsite.records import Record, Text, read_toml

ROLES = ("server", "load")
_SSH_TARGET = re.compile(
    r"(?:(?P<user>[A-Za-z0-9._-]+)@)?(?P<host>[A-Za-z0-9._-]+|\[[0-9A-Fa-f:]+\])(?::(?P<port>\d+))?"
)


def _one_address(value: str) -> str:
    """An address servers can listen on: refused where it means every address (0.0.0.0, ::, 0, ::0...)."""
    text = value.strip("[]")
    found: ipaddress.IPv4Address | ipaddress.IPv6Address | None
    try:
        found = ipaddress.ip_address(text)
    except ValueError:
        try:  # the shorthands the C library reads as IPv4 ("0", "0.0")
            found = ipaddress.ip_address(socket.inet_aton(text)) if re.fullmatch(r"[0-9.x]+", text) else None
        except OSError:
            found = None
    if found is not None and found.is_unspecified:
        raise ValueError(f"{value!r} means every address: servers listen on one address; give the host's own address")
    return value


class HostEntry(Record):
    """One role's host: reached over SSH, its servers bound to `address`, the project in `dir`."""

    ssh: Text  # [user@]host[:port], as ssh takes it (the user's ~/.ssh/config applies)
    address: Text | None = None  # where servers listen / the load aims; default: the host of `ssh`
    dir: Text = "benchsite"  # the project folder on that host, relative to the user's home or absolute
    identity: Text | None = None  # a private key file; default: the user's SSH keys and agent

    @field_validator("ssh")
    @classmethod
    def _target(cls, value: str) -> str:
        match = _SSH_TARGET.fullmatch(value)
        if not match:
            raise ValueError(f"{value!r} is not an SSH target: write user@host or user@host:port")
        port = match.group("port")
        if port is not None and not 1 <= int(port[:6]) <= 65535:
            raise ValueError(f"{value!r}: port {port[:12]} is not a port: give one from 1 to 65535")
        _one_address(match.group("host"))  # servers listen on the host's own address unless `address` says
        return value

    @field_validator("address")
    @classmethod
    def _not_everywhere(cls, value: str | None) -> str | None:
        return None if value is None else _one_address(value)

    @property
    def user(self) -> str | None:
        match = _SSH_TARGET.fullmatch(self.ssh)
        return match.group("user") if match else None

    @property
    def hostname(self) -> str:
        match = _SSH_TARGET.fullmatch(self.ssh)
        return match.group("host").strip("[]") if match else self.ssh

    @property
    def port(self) -> int | None:
        match = _SSH_TARGET.fullmatch(self.ssh)
        return int(match.group("port")) if match and match.group("port") else None

    @property
    def listen_address(self) -> str:
        return self.address or self.hostname


class Hosts(Record):
    """The [hosts] table: a host per role; a role left out runs on this machine."""

    server: HostEntry | None = None
    load: HostEntry | None = None

    @property
    def remote(self) -> bool:
        return self.server is not None or self.load is not None

    def roles(self) -> dict[Literal["server", "load"], HostEntry]:
        found: dict[Literal["server", "load"], HostEntry] = {}
        if self.server is not None:
            found["server"] = self.server
        if self.load is not None:
            found["load"] = self.load
        return found


class HostsFile(Record):
    """A TOML file holding a [hosts] table (other tables of the file are not read here)."""

    hosts: Hosts = Field(default_factory=Hosts)


def parse_hosts(text: str) -> Hosts:
    """`--hosts`: a TOML file with a [hosts] table, or `server=user@host,load=user@host`."""
    if not text:
        return Hosts()
    if text.endswith(".toml"):
        data = read_toml(Path(text))
        hosts = HostsFile.from_json({"hosts": data.get("hosts", {})}, text).hosts
        if not hosts.remote:
            raise BenchError(f"{text}: no [hosts.server] or [hosts.load] entry: add one, or run without --hosts")
        return hosts
    entries: dict[str, dict[str, str]] = {}
    for part in text.split(","):
        role, sep, target = part.strip().partition("=")
        if not sep or role not in ROLES:
            raise BenchError(
                f"--hosts {text!r}: {part.strip()!r} is not ROLE=user@host: use server=... and/or load=..., "
                "or a TOML file with a [hosts] table"
            )
        if role in entries:
            raise BenchError(f"--hosts {text!r}: the {role} role is given twice: give it once")
        entries[role] = {"ssh": target.strip()}
    return Hosts.from_json(entries, f"--hosts {text!r}")
