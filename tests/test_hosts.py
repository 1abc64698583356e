"""Runs across hosts: servers in one network namespace, the load tool in another, driven over SSH.

The lab (tests/netns.py) gives each namespace its own sshd and addresses; `invoke hosts-setup`
syncs the project there and installs its venv (from wheels built here: the namespaces have no way
out), then real recipes run with `--hosts` and are checked like single-machine runs: data stored,
pages built, and nothing left running or bound in either namespace, however the run ends.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from netns import Lab, unavailable
from tiny_site import build

from ahead import AHEAD, Job
from benchsite.commands.invoking import INTERRUPTED_SET_UP
from benchsite.errors import BenchError
from benchsite.harness.hosts.provision import INSTALLED_STAMP
from benchsite.harness.processes.signals import TEST_PAUSE
from benchsite.model.hosts import parse_hosts
from benchsite.results.store import list_runs, load_run
from benchsite.tools import parse_report
from committed import COMMITTED_DATA
from conftest import INTERRUPTED_LINE, INVOKE, REPO, run_invoke

pytestmark = pytest.mark.two_hosts


def test_hosts_are_given_as_roles_or_a_toml_file(tmp_path: Path) -> None:
    hosts = parse_hosts("server=bench@srv.example:2222,load=me@gen.example")
    assert hosts.server is not None and hosts.load is not None
    assert (hosts.server.user, hosts.server.hostname, hosts.server.port) == ("bench", "srv.example", 2222)
    assert hosts.server.listen_address == "srv.example" and hosts.load.dir == "benchsite"
    path = tmp_path / "hosts.toml"
    path.write_text('[hosts.server]\nssh = "root@a.example"\naddress = "192.0.2.7"\n')
    from_file = parse_hosts(str(path))
    assert from_file.server is not None and from_file.server.listen_address == "192.0.2.7" and from_file.load is None


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("srv=root@a", "is not ROLE=user@host"),
        ("server=root@a,server=root@b", "the server role is given twice"),
        ("server=root@a b", "is not an SSH target"),
    ],
)
def test_a_malformed_hosts_option_is_refused(given: str, says: str) -> None:
    with pytest.raises(BenchError, match=says):
        parse_hosts(given)


@pytest.mark.parametrize("address", ["0.0.0.0", "0", "0.0", "::", "::0", "[::]"])
def test_servers_never_listen_on_every_address(tmp_path: Path, address: str) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(f'[hosts.server]\nssh = "root@a.example"\naddress = "{address}"\n')
    with pytest.raises(BenchError, match="servers listen on one address"):
        parse_hosts(str(path))
    with pytest.raises(BenchError, match=r"means every address.*: fix the option$"):  # an option, not a file
        parse_hosts(f"server=root@{address if ':' not in address else '[' + address.strip('[]') + ']'}")


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("server=root@srv.example:70000", "port 70000 is not a port"),
        ("server=root@srv.example:0", "port 0 is not a port"),
        ("server=root@srv.example:" + "9" * 20, "is not a port: give one from 1 to 65535"),
    ],
)
def test_a_port_out_of_range_is_one_line(given: str, says: str) -> None:
    with pytest.raises(BenchError, match=says):
        parse_hosts(given)


def test_an_empty_hosts_table_is_refused_not_run_here(tmp_path: Path) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text("[hosts]\n")
    with pytest.raises(BenchError, match=r"no \[hosts.server\] or \[hosts.load\] entry"):
        parse_hosts(str(path))


def set_up_lab() -> Lab | str:
    """Two namespace hosts with the project set up by `invoke hosts-setup` (a real sync and install), or
    why they cannot be made here."""
    reason = unavailable()
    if reason:
        return reason
    made = Lab(Path(tempfile.mkdtemp(prefix="lab-"))).__enter__()
    try:
        result = run_invoke("hosts-setup", "--hosts", str(made.hosts_file()), "--offline", timeout=1200)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "requirements installed" in result.stderr  # the first host installs, the second finds it done
        assert "requirements already installed" in result.stderr
    except BaseException:
        made.__exit__()
        raise
    return made


def tear_down_lab(made: Lab | str) -> None:
    if isinstance(made, Lab):
        made.__exit__()


# The wheels when none are built (README command 1 leaves them to this: about 50 s), then the venv install.
AHEAD.add("two-host lab", Job("lab", set_up_lab, seconds=60, close=tear_down_lab))


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    made = AHEAD.take("two-host lab")
    if isinstance(made, str):
        pytest.skip(made)
    try:
        yield made
    finally:
        made.__exit__()


def assert_nothing_left(lab: Lab) -> None:
    """No process but sshd and no listening socket but sshd's, in either namespace, once the agents are
    through their stop sequence (a server that ignores TERM, e.g. one still starting, is killed after 15 s)."""
    deadline = time.monotonic() + 30
    while True:
        left = lab.server.leftovers() + lab.load.leftovers() + lab.server.listening() + lab.load.listening()
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert left == []


def test_a_quick_run_with_server_and_load_on_two_hosts_is_stored_and_shown(lab: Lab, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    shutil.copytree(COMMITTED_DATA, data_dir, ignore=shutil.ignore_patterns("*-quick"))  # every committed run
    result = run_invoke(
        "recipe", "cherrypy-speed", "--profile", "quick", "--hosts", str(lab.hosts_file()), "--data-dir", str(data_dir)
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert_nothing_left(lab)
    run = load_run(list_runs(data_dir / "cherrypy-speed", "quick")[-1])
    assert run.topology is not None
    assert run.topology.server.machine == run.machine and run.topology.load.machine.id == run.machine.id
    assert "root@" not in run.run_file.read_text()  # logins stay out of data/
    assert run.topology.load.environment.tools["ab"].startswith("This is ApacheBench")
    assert (run.settings.server_cpu, run.settings.load_cpu) == (0, 1)  # each host has the CPU it is pinned to
    for subject in run.subjects:
        assert "{host}" in subject.argv  # the server listened on its host's address, stored as a placeholder
        assert subject.verification is not None and subject.verification.body == "OK"
        for cell in subject.cells:
            for rep in cell.repetitions:
                assert rep.argv[-1].startswith("http://{host}:")
                assert rep.result == parse_report(cell.tool, run.raw_text(rep))
                assert rep.server_cpu_s > 0  # read on the server host
        assert (run.path / "logs" / f"{subject.name}.log").is_file()  # collected back from the server host
    stored = (run.path / "run.json").read_text()
    assert str(lab.project) not in stored and "/tmp/" not in stored  # no path of either host...
    assert tempfile.gettempdir() not in stored  # ...nor this one's temporary folder
    for stored_file in run.path.rglob("*"):  # nor any address of either host, in any file kept
        if stored_file.is_file():
            text = stored_file.read_text(errors="replace")
            assert lab.server.bench_address not in text and lab.server.ssh_address not in text, stored_file
    # The page's two-host directives on it (the whole site with a two-host run: the committed site's build)
    body = (
        ".. bench-topology:: cherrypy-speed\n\n"
        f".. bench-environment:: cherrypy-speed\n   :run: {run.path.name}\n\n"
        f".. bench-results:: cherrypy-speed\n   :run: {run.path.name}\n\n"
        f".. bench-raw:: cherrypy-speed\n   :run: {run.path.name}\n"
    )
    page = build(tmp_path / "page", body, data_dir=data_dir, profile="quick")
    assert page.warnings == []
    assert f"servers on {run.machine.name} (machine {run.machine.id})" in page.text and "(load host)" in page.text
    assert lab.server.ssh_address not in page.html and "root@" not in page.html


def test_a_recipe_of_clients_is_refused_across_hosts(lab: Lab) -> None:
    result = run_invoke("recipe", "http-clients", "--profile", "quick", "--hosts", str(lab.hosts_file()))
    assert result.returncode == 1
    assert "measures clients on the machine of their backend" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_an_unreachable_host_is_one_line_before_anything_starts(lab: Lab, tmp_path: Path) -> None:
    closed_port = f"server=root@{lab.server.ssh_address}:2"  # the lab's own host, a port nobody listens on
    result = run_invoke(
        "recipe", "cherrypy-speed", "--profile", "quick", "--hosts", closed_port, "--data-dir", str(tmp_path)
    )
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: cannot reach the server host root@{lab.server.ssh_address}:2 over SSH")
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_a_host_that_was_never_set_up_says_how_to_set_it_up(lab: Lab, tmp_path: Path) -> None:
    hosts = lab.hosts_file(server_dir=tmp_path / "nothing-here")
    result = run_invoke(
        "recipe", "cherrypy-speed", "--profile", "quick", "--hosts", str(hosts), "--data-dir", str(tmp_path)
    )
    assert result.returncode == 1
    assert "has no working project in" in result.stderr and "invoke hosts-setup" in result.stderr
    assert "Traceback" not in result.stderr


def _is_pip_installing(process: str) -> bool:
    """Whether a 'PID command' line is pip itself installing (not the shell whose command line names it, which
    starts while the venv is still being made)."""
    _, program, *rest = process.split(" ")
    return Path(program).name.startswith("python") and "pip install" in " ".join(rest)


def test_ctrl_c_during_a_hosts_remote_install_stops_the_install_there(lab: Lab, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh-project"  # a folder of its own on the server host: it installs again
    setup = subprocess.Popen(
        [*INVOKE, "hosts-setup", "--hosts", str(lab.hosts_file(server_dir=fresh)), "--offline"],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not any(_is_pip_installing(line) for line in lab.server.leftovers()):
            assert setup.poll() is None and time.monotonic() < deadline, "no pip install started on the server host"
            time.sleep(0.05)
        os.killpg(setup.pid, signal.SIGINT)  # as a Ctrl-C in the terminal reaches the whole group
        said = setup.communicate(timeout=60)[1]
    finally:
        setup.kill()
    assert setup.returncode == 130 and said.strip().splitlines()[-1] == INTERRUPTED_SET_UP, said
    assert lab.server.leftovers() == []  # no pip left running there
    assert not (fresh / INSTALLED_STAMP).exists()  # stopped, not waited for until it finished


def start_two_host_run(lab: Lab, data_dir: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """A quick wsgi-servers run across the two hosts, returned once its servers listen on the server host."""
    data = str(data_dir)
    process = subprocess.Popen(
        [*INVOKE, "recipe", "wsgi-servers", "--profile", "quick", "--hosts", str(lab.hosts_file()), "--data-dir", data],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "BENCHSITE_LINK_TIMEOUT_S": "5", **(env or {})},
    )
    deadline = time.monotonic() + 120
    while len(lab.server.listening()) < 5:
        assert process.poll() is None and time.monotonic() < deadline, "the servers did not start"
        time.sleep(0.2)
    return process


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_a_two_host_run_leaves_nothing_on_either_host(lab: Lab, tmp_path: Path, signum: int) -> None:
    process = start_two_host_run(lab, tmp_path)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    assert INTERRUPTED_LINE.search(stderr), stderr[-2000:]
    assert_nothing_left(lab)
    assert list_runs(tmp_path / "wsgi-servers") == []


def test_a_killed_harness_leaves_nothing_on_either_host(lab: Lab, tmp_path: Path) -> None:
    process = start_two_host_run(lab, tmp_path)
    process.kill()  # SIGKILL: the connections drop, and each host's agent stops what it started
    process.communicate(timeout=60)
    assert_nothing_left(lab)


def test_a_link_gone_silent_stops_the_servers_and_the_run(lab: Lab, tmp_path: Path) -> None:
    """The link goes down as the harness asks for the sixth server's prepare step, a call that may take five
    minutes: the agent's silence, not that call's longest duration, says the link is lost."""
    paused = tmp_path / "paused"
    process = start_two_host_run(lab, tmp_path / "data", env={TEST_PAUSE: f"agent-prepare#6:{paused}"})
    deadline = time.monotonic() + 60
    while not paused.exists():
        assert process.poll() is None and time.monotonic() < deadline, "the run did not reach its sixth server"
        time.sleep(0.05)
    link = f"bsms0-{lab.tag}"  # the management link the harness reaches the server host by
    subprocess.run(["ip", "link", "set", link, "down"], check=True)
    paused.unlink()
    try:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 1
        assert "lost the connection to the server host" in stderr.strip().splitlines()[-1]
        assert_nothing_left(lab)  # the agent heard nothing for 5 s and stopped its servers
    finally:
        subprocess.run(["ip", "link", "set", link, "up"], check=True)
        if process.poll() is None:  # a harness that missed the loss is not left waiting on its own
            process.kill()
            process.communicate()


def test_a_host_whose_copy_of_the_project_is_stale_is_refused(lab: Lab, tmp_path: Path) -> None:
    record_path = lab.project / ".benchsite-sync.json"
    original = record_path.read_text()
    record = json.loads(original)
    record["digest"] = "0" * 64  # as after a file changed here since the last hosts-setup
    record_path.write_text(json.dumps(record))
    try:
        result = run_invoke(
            "recipe",
            "cherrypy-speed",
            "--profile",
            "quick",
            "--hosts",
            str(lab.hosts_file()),
            "--data-dir",
            str(tmp_path),
        )
    finally:
        record_path.write_text(original)
    assert result.returncode == 1
    assert "has another copy of the project than this one" in result.stderr and "hosts-setup" in result.stderr
    assert "Traceback" not in result.stderr and not any(tmp_path.iterdir())
    assert_nothing_left(lab)


def test_the_server_role_alone_on_a_host_with_the_load_here(lab: Lab, tmp_path: Path) -> None:
    hosts = str(lab.server_only_hosts_file())
    result = run_invoke("recipe", "cherrypy-speed", "--profile", "quick", "--hosts", hosts, "--data-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    assert_nothing_left(lab)
    run = load_run(list_runs(tmp_path / "cherrypy-speed", "quick")[-1])
    assert run.topology is not None and run.topology.load.machine.name == run.machine.name
    for subject in run.subjects:
        for cell in subject.cells:
            assert all(rep.argv[-1].startswith("http://{host}:") for rep in cell.repetitions)
            assert all(rep.result is not None and rep.server_cpu_s > 0 for rep in cell.repetitions)


def test_a_host_that_does_not_speak_ssh_is_one_line_without_paramikos_traceback(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    not_ssh = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        hosts = f"server=root@127.0.0.1:{port}"
        result = run_invoke(
            "recipe", "cherrypy-speed", "--profile", "quick", "--hosts", hosts, "--data-dir", str(tmp_path)
        )
    finally:
        not_ssh.terminate()
        not_ssh.wait(timeout=10)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: cannot reach the server host root@127.0.0.1:{port} over SSH (Error reading SSH protocol banner): "
        f"check the address, that sshd runs there and that your key is accepted (ssh root@127.0.0.1:{port} true)"
    ]
