"""No stored run carries the machine's paths; commands read portably on the pages."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from benchsite.model.portable import inferred_placeholders, make_portable, placeholders_of, shown_command
from benchsite.model.upgrade import read_run
from conftest import FIXTURES, REPO

MACHINE_PATH = re.compile(r"(?<![\w.}/-])/(work|root|home|tmp)/")
PRIVATE_ADDRESS = re.compile(r"(?<![\w.])(10\.\d+|192\.168|172\.(1[6-9]|2\d|3[01]))\.\d+\.\d+(?!\w)")


def test_the_paths_of_a_first_run_are_inferred_and_replaced() -> None:
    text = (FIXTURES / "runs" / "v1-second-shape-http-clients.json").read_text()
    assert MACHINE_PATH.search(text)
    portable = make_portable(text, inferred_placeholders(text))
    assert not MACHINE_PATH.search(portable) and "/tmp/benchsite-" not in portable
    document = read_run(json.loads(portable), Path("v1"))
    client = document.subject("pycurl-reuse-discard")
    assert client is not None and client.argv[:2] == ("{python}", "{recipe_dir}/client_bench.py")
    rep = client.cells[0].repetitions[0]
    assert rep.argv[-1] == "{workroot}/api/ca.pem"


def test_a_run_replaces_exactly_the_paths_it_filled_in() -> None:
    values = {"python": "/x/.venv/bin/python3", "bin": "/x/.venv/bin", "recipe_dir": "/x/recipes/r", "port": "8080"}
    placeholders = placeholders_of(values, Path("/tmp/benchsite-abc"))
    argv = ["/x/.venv/bin/python3", "/x/recipes/r/app.py", "/tmp/benchsite-abc/nginx/nginx.conf", "8080"]
    assert make_portable(json.dumps(argv), placeholders) == json.dumps(
        ["{python}", "{recipe_dir}/app.py", "{workroot}/nginx/nginx.conf", "8080"]
    )


def test_another_hosts_address_becomes_a_placeholder_whole_and_only_there() -> None:
    placeholders = placeholders_of({"host": "10.232.90.1", "python": "/x/python3"}, None)
    text = "Benchmarking 10.232.90.1 (be patient)\nServer Hostname: 10.232.90.1\nhttp://10.232.90.12:80/ 110.232.90.1"
    assert make_portable(text, placeholders) == (
        "Benchmarking {host} (be patient)\nServer Hostname: {host}\nhttp://10.232.90.12:80/ 110.232.90.1"
    )
    assert placeholders_of({"host": "127.0.0.1"}, None) == {}  # one machine: the loopback says nothing
    stored = '{"server_hostname": "10.232.90.1", "argv": ["ab", "http://10.232.90.1:8080/"]}'
    assert make_portable(stored, inferred_placeholders(stored)) == (
        '{"server_hostname": "{host}", "argv": ["ab", "http://{host}:8080/"]}'
    )
    assert shown_command(["ab", "http://{host}:8080/"]) == "ab http://$SERVER_HOST:8080/"


def test_a_users_home_folder_in_a_servers_log_becomes_a_placeholder() -> None:
    log = "[INFO] Control socket listening at /root/.gunicorn/gunicorn.ctl\nkept: /home/ann.b/x and a/root/b /rooted/"
    assert make_portable(log, {}) == (
        "[INFO] Control socket listening at {home}/.gunicorn/gunicorn.ctl\nkept: {home}/x and a/root/b /rooted/"
    )
    assert shown_command(["{home}/.gunicorn/gunicorn.ctl"]) == "$HOME/.gunicorn/gunicorn.ctl"


def test_commands_are_shown_with_portable_names() -> None:
    assert shown_command(["{python}", "app.py", "{port}x", "a b"]) == "python app.py '{port}x' 'a b'"
    assert shown_command(["{bin}/uwsgi", "-c", "{workroot}/u.ini"]) == ".venv/bin/uwsgi -c $WORKROOT/u.ini"


def test_nothing_committed_under_data_carries_a_machine_path_or_a_private_address() -> None:
    tracked = subprocess.run(["git", "ls-files", "-z", "data"], cwd=REPO, capture_output=True, text=True).stdout
    leaks = []
    for name in filter(None, tracked.split("\0")):
        path = REPO / name
        if path.is_file() and path.suffix in (".json", ".conf", ".log", ".txt", ".toml", ".wsgi"):
            text = path.read_text(errors="replace")
            if MACHINE_PATH.search(text) or "/tmp/benchsite-" in text or PRIVATE_ADDRESS.search(text):
                leaks.append(name)
    assert leaks == []
