"""Two test hosts on this machine: network namespaces, each with its own sshd and addresses.

    this machine (the controller) ──10.231.T.1 ─ 10.231.T.2── server namespace ─10.232.T.1─┐
                                  └─10.231.T.5 ─ 10.231.T.6── load namespace   ─10.232.T.2─┘
                                                              (the benchmark link, one veth pair)

The controller reaches each host's sshd over a management link of its own; the load tool reaches
the servers over the benchmark link between the two namespaces. A key is made per lab. Everything
is torn down on exit (sshd stopped by PID, namespaces and links deleted).
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"


def unavailable() -> str | None:
    """Why a lab cannot be made here (None when it can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if not Path(SSHD).exists() or shutil.which("ssh-keygen") is None:
        return "no sshd here (Debian's openssh-server; .ci/run installs it)"
    if shutil.which("ip") is None:
        return "no ip command (iproute2)"
    name = f"bs-probe-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if made.returncode != 0:
        return f"creating a network namespace is not permitted here ({made.stderr.strip()})"
    subprocess.run(["ip", "netns", "delete", name], capture_output=True)
    return None


def _ip(*args: str, namespace: str | None = None) -> None:
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    subprocess.run([*prefix, "ip", *args], check=True, capture_output=True, text=True)


@dataclass
class Host:
    """One namespace host: its SSH address (management) and its benchmark address."""

    namespace: str
    ssh_address: str
    bench_address: str
    sshd: subprocess.Popen[bytes] | None = None

    def pids(self) -> set[int]:
        """Every process in the namespace."""
        listed = subprocess.run(["ip", "netns", "pids", self.namespace], capture_output=True, text=True)
        return {int(pid) for pid in listed.stdout.split()}

    def leftovers(self) -> list[str]:
        """Processes in the namespace other than sshd's own (its listener, and the session process of a
        connection whose link went silent, which sshd ends when TCP gives up), as 'PID command' lines."""
        keep = {self.sshd.pid} if self.sshd else set()
        found = []
        for pid in sorted(self.pids() - keep):
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if not command.startswith("sshd: "):
                found.append(f"{pid} {command}")
        return found

    def listening(self) -> list[str]:
        """TCP listeners in the namespace other than sshd's port 22."""
        shown = subprocess.run(
            ["ip", "netns", "exec", self.namespace, "ss", "-Hltn"], capture_output=True, text=True
        ).stdout
        return [line for line in shown.splitlines() if line.split() and not line.split()[3].endswith(":22")]


@dataclass
class Lab:
    """The two hosts, the key that reaches both, and the hosts file a run is given."""

    root: Path
    tag: int = field(default_factory=lambda: random.randint(1, 250))
    server: Host = field(init=False)
    load: Host = field(init=False)

    def __post_init__(self) -> None:
        t = self.tag
        self.server = Host(f"bs-srv-{t}", f"10.231.{t}.2", f"10.232.{t}.1")
        self.load = Host(f"bs-load-{t}", f"10.231.{t}.6", f"10.232.{t}.2")
        self.key = self.root / "id_ed25519"
        self.project = self.root / "remote-project"

    def hosts_file(self, server_dir: Path | None = None) -> Path:
        """A TOML [hosts] table placing the server and the load roles in the two namespaces."""
        path = self.root / "hosts.toml"
        folder = server_dir or self.project
        path.write_text(
            textwrap.dedent(f"""\
            [hosts.server]
            ssh = "root@{self.server.ssh_address}"
            address = "{self.server.bench_address}"
            dir = "{folder}"
            identity = "{self.key}"

            [hosts.load]
            ssh = "root@{self.load.ssh_address}"
            address = "{self.load.bench_address}"
            dir = "{self.project}"
            identity = "{self.key}"
            """)
        )
        return path

    def server_only_hosts_file(self) -> Path:
        """The server role alone in its namespace, reached over its management link; the load stays here."""
        path = self.root / "server-only.toml"
        path.write_text(
            textwrap.dedent(f"""\
            [hosts.server]
            ssh = "root@{self.server.ssh_address}"
            address = "{self.server.ssh_address}"
            dir = "{self.project}"
            identity = "{self.key}"
            """)
        )
        return path

    def __enter__(self) -> Lab:
        try:
            self._links()
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)], check=True)
            (self.root / "authorized_keys").write_text(self.key.with_suffix(".pub").read_text())
            Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation folder
            for host in (self.server, self.load):
                self._sshd(host)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _links(self) -> None:
        t = self.tag
        for host in (self.server, self.load):
            _ip("netns", "add", host.namespace)
            _ip("link", "set", "lo", "up", namespace=host.namespace)
        for host, side, ours in ((self.server, "s", f"10.231.{t}.1/30"), (self.load, "l", f"10.231.{t}.5/30")):
            outer, inner = f"bsm{side}0-{t}", f"bsm{side}1-{t}"
            _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            _ip("link", "set", inner, "netns", host.namespace)
            _ip("addr", "add", ours, "dev", outer)
            _ip("link", "set", outer, "up")
            _ip("addr", "add", f"{host.ssh_address}/30", "dev", inner, namespace=host.namespace)
            _ip("link", "set", inner, "up", namespace=host.namespace)
        _ip("link", "add", f"bsb-s-{t}", "type", "veth", "peer", "name", f"bsb-l-{t}")
        for host, end in ((self.server, f"bsb-s-{t}"), (self.load, f"bsb-l-{t}")):
            _ip("link", "set", end, "netns", host.namespace)
            _ip("addr", "add", f"{host.bench_address}/24", "dev", end, namespace=host.namespace)
            _ip("link", "set", end, "up", namespace=host.namespace)

    def _sshd(self, host: Host) -> None:
        host_key = self.root / f"host_key_{host.namespace}"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)], check=True)
        config = self.root / f"sshd_{host.namespace}.conf"
        config.write_text(
            textwrap.dedent(f"""\
            ListenAddress {host.ssh_address}
            HostKey {host_key}
            AuthorizedKeysFile {self.root}/authorized_keys
            PidFile none
            PermitRootLogin prohibit-password
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            StrictModes no
            UsePAM no
            PrintMotd no
            Subsystem sftp internal-sftp
            """)
        )
        log = (self.root / f"sshd_{host.namespace}.log").open("wb")
        host.sshd = subprocess.Popen(  # a session of its own, as a remote host's: a Ctrl-C here does not reach it
            ["ip", "netns", "exec", host.namespace, SSHD, "-D", "-e", "-f", str(config)],
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection((host.ssh_address, 22), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or host.sshd.poll() is not None:
                    raise RuntimeError(f"sshd in {host.namespace} did not start: see {log.name}") from None
                time.sleep(0.1)

    def __exit__(self, *exc: object) -> None:
        for host in (self.server, self.load):
            if host.sshd is not None and host.sshd.poll() is None:
                host.sshd.terminate()
                host.sshd.wait(timeout=10)
            subprocess.run(["ip", "netns", "delete", host.namespace], capture_output=True)
        for side in ("s", "l"):
            subprocess.run(["ip", "link", "delete", f"bsm{side}0-{self.tag}"], capture_output=True)
