"""Generated server configurations, checked on their text (Cherokee even where it is not installed)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from benchsite.harness.basics.subjects import render_templates
from benchsite.model.recipe import load_recipe
from conftest import REPO

VALUES = {
    "port": "8123",
    "workdir": "/tmp/w",
    "port_hello_scgi": "9001",
    "port_django_scgi": "9002",
    "recipe_dir": "/r",
    "site_packages": "/sp",
    "user": "www-data",
    "group": "www-data",
    "python": "python3",
    "bin": "/b",
    "host": "127.0.0.1",
    "port2": "8124",
}


def render(subject_name: str, tmp_path: Path) -> dict[str, str]:
    recipe = load_recipe("cherokee-vs-apache", REPO / "recipes", REPO / "conf")
    subject = next(s for s in recipe.subjects if s.name == subject_name)
    values = {**VALUES, "workdir": str(tmp_path / "work")}
    return render_templates(subject, recipe, values)


def test_cherokee_gets_the_static_root_and_both_scgi_backends(tmp_path: Path) -> None:
    config = render("cherokee", tmp_path)["cherokee.conf"]
    lines = set(config.splitlines())
    assert "server!bind!1!port = 8123" in lines
    assert "server!bind!1!interface = 127.0.0.1" in lines
    assert f"vserver!1!document_root = {tmp_path}/work/www" in lines
    assert "source!1!host = 127.0.0.1:9001" in lines and "source!2!host = 127.0.0.1:9002" in lines
    assert "vserver!1!rule!3!match!directory = /feeds" in lines
    assert f"include = {tmp_path}/work/cherokee-mime.conf" in lines
    assert "$" not in config


def test_cherokee_loads_the_systems_mime_table_like_apache_and_lighttpd(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "prepare.py", str(tmp_path), "--cherokee-mime-types"],
        cwd=REPO / "recipes" / "cherokee-vs-apache",
        check=True,
        capture_output=True,
    )
    lines = (tmp_path / "cherokee-mime.conf").read_text().splitlines()
    system = [line.split("#")[0].split() for line in Path("/etc/mime.types").read_text().splitlines()]
    assert len(lines) == len([fields for fields in system if len(fields) > 1]) > 500
    assert "mime!text/html!extensions = html,htm,shtml" in lines
    assert all(re.fullmatch(r"mime![\w.+-]+/[\w.+-]+!extensions = [^ ,]+(,[^ ,]+)*", line) for line in lines)


def test_apache_runs_django_in_a_mod_wsgi_daemon_on_loopback_only(tmp_path: Path) -> None:
    files = render("apache", tmp_path)
    config = files["apache.conf"]
    assert "Listen 127.0.0.1:8123" in config
    assert f'ServerRoot "{tmp_path}/work"' in config and f'PidFile "{tmp_path}/work/apache.pid"' in config
    assert "WSGIDaemonProcess feed processes=1 threads=15 python-path=/r:/sp" in config
    assert "ProxyPass /scgi/ scgi://127.0.0.1:9001/" in config
    assert f'os.environ["FEED_DATABASE"] = "{tmp_path}/work/feed.sqlite3"' in files["feed.wsgi"]
