"""`invoke byo`: its configuration, its one-line errors, a real patch that fails, and the origins a run records."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchsite.errors import BenchError
from benchsite.harness.basics.imports import imported
from benchsite.harness.builds.byo import Builder, portable_path, read_builds, search_path, sha256_of
from benchsite.model.byo import BUILD_RECORD, ByoBuild, load_byo_conf
from conftest import REPO, run_invoke


def test_every_system_names_its_patches_and_what_it_provides() -> None:
    conf = load_byo_conf(REPO / "conf")
    assert set(conf.systems) == {"fapws3", "cherokee", "wsgiboost"}
    for name, system in conf.systems.items():
        assert system.patches, name
        for patch in system.patches:
            text = (REPO / "conf" / "byo" / patch).read_text()
            assert text.count("\n--- a/") >= 1 and "\n+++ b/" in text, patch
        assert system.provides.modules or system.provides.programs
        assert system.sdist is not None or system.upstream is not None  # somewhere to take the source from


@pytest.mark.integration
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("byo", "nginx"), "error: no system 'nginx' to build: choose one of cherokee, fapws3, wsgiboost"),
        (
            ("byo", "cherokee", "--source", "/no/such/folder"),
            "error: --source /no/such/folder: no such folder: pass your checkout of the system's repository",
        ),
    ],
)
def test_a_wrong_name_or_folder_is_one_line(args: tuple[str, ...], message: str) -> None:
    result = run_invoke(*args)
    assert result.returncode == 1 and result.stderr.strip() == message and "Traceback" not in result.stderr


def write_conf(conf_dir: Path, system: str) -> None:
    (conf_dir / "byo").mkdir(parents=True)
    (conf_dir / "byo.toml").write_text(system)


def test_missing_debian_packages_are_named_with_the_command_to_install_them(tmp_path: Path) -> None:
    write_conf(
        tmp_path / "conf",
        '[toy]\nkind = "python"\nsummary = "a toy"\nupstream = "https://example.org/toy"\n'
        'apt = ["build-essential", "no-such-package-benchsite"]\nprovides = { modules = ["toy"] }\n',
    )
    with pytest.raises(BenchError) as raised:
        Builder(tmp_path, tmp_path / "conf", "toy").build(None)
    assert str(raised.value) == (
        "building toy needs Debian packages that are not installed: "
        "apt-get install -y no-such-package-benchsite (as root), then run this again"
    )
    assert not (tmp_path / "build").exists()  # nothing started


def test_a_system_without_an_archive_asks_for_the_users_checkout(tmp_path: Path) -> None:
    write_conf(
        tmp_path / "conf",
        '[toy]\nkind = "autotools"\nsummary = "a toy"\nupstream = "https://example.org/toy"\n'
        'provides = { programs = ["toy"] }\n',
    )
    with pytest.raises(
        BenchError, match=r"git clone https://example.org/toy DIR, then .venv/bin/invoke byo toy --source DIR"
    ):
        Builder(tmp_path, tmp_path / "conf", "toy").build(None)


def test_a_patch_that_does_not_apply_names_the_log_and_leaves_no_record(tmp_path: Path) -> None:
    write_conf(
        tmp_path / "conf",
        '[toy]\nkind = "python"\nsummary = "a toy"\nupstream = "https://example.org/toy"\n'
        'patches = ["toy.patch"]\nprovides = { modules = ["toy"] }\n',
    )
    (tmp_path / "conf" / "byo" / "toy.patch").write_text(
        "--- a/setup.py\n+++ b/setup.py\n@@ -1 +1 @@\n-print('python 2')\n+print('python 3')\n"
    )
    source = tmp_path / "checkout"
    source.mkdir()
    (source / "setup.py").write_text("print('something else')\n")
    working = tmp_path / "build" / "byo" / "toy" / BUILD_RECORD
    working.parent.mkdir(parents=True)
    working.write_text('{"the": "working build"}\n')
    with pytest.raises(BenchError) as raised:
        Builder(tmp_path, tmp_path / "conf", "toy").build(source)
    message = str(raised.value)
    assert message.startswith("building toy: toy.patch does not apply to this source (Hunk #1 FAILED")
    assert "\n" not in message and message.endswith("the whole output is in build/byo/toy/build.log")
    assert working.read_text() == '{"the": "working build"}\n'  # nothing installed was replaced: its record stays
    assert (source / "setup.py").read_text() == "print('something else')\n"  # the user's checkout is untouched


def test_a_source_of_another_kind_says_what_is_missing_and_which_commit_fits(tmp_path: Path) -> None:
    write_conf(
        tmp_path / "conf",
        '[toy]\nkind = "autotools"\nsummary = "a toy"\nupstream = "https://example.org/toy"\n'
        'fits = "0123456789abcdef0123 (v1.0)"\nprovides = { programs = ["toy"] }\n',
    )
    source = tmp_path / "dev-branch"
    source.mkdir()
    (source / "CMakeLists.txt").write_text("project(toy)\n")
    with pytest.raises(BenchError) as raised:
        Builder(tmp_path, tmp_path / "conf", "toy").build(source)
    assert str(raised.value) == (
        f"{source} has no configure.ac, which this autotools build needs (another branch or another project?): "
        "the patches fit https://example.org/toy commit 0123456789abcdef0123 (v1.0) (git checkout 0123456789ab)"
    )
    assert not (tmp_path / "build").exists()


def test_a_source_copy_skips_pipes_and_keeps_no_local_path(tmp_path: Path) -> None:
    write_conf(
        tmp_path / "conf",
        '[toy]\nkind = "python"\nsummary = "a toy"\nupstream = "https://example.org/toy"\n'
        'provides = { modules = ["toy"] }\n',
    )
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    (upstream / "setup.py").write_text("print('toy')\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", str(upstream)], check=True)
    subprocess.run([*git, "-C", str(upstream), "add", "."], check=True)
    subprocess.run([*git, "-C", str(upstream), "commit", "-qm", "toy"], check=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(upstream), str(clone)], check=True)
    os.mkfifo(clone / "a-pipe")
    builder = Builder(tmp_path, tmp_path / "conf", "toy")
    builder.folder.mkdir(parents=True)
    where = builder.fetch_source(clone)
    assert (builder.src / "setup.py").is_file() and not (builder.src / "a-pipe").exists()
    assert str(tmp_path) not in where and where.startswith("https://example.org/toy (cloned from a local copy) commit ")


def test_the_fapws3_build_record_matches_the_installed_module() -> None:
    builds = {build.name: build for build in read_builds(REPO)}
    if "fapws3" not in builds:
        pytest.skip("fapws3 was not built here (the README's set-up runs `invoke byo fapws3`)")
    build: ByoBuild = builds["fapws3"]
    [provided] = build.files
    origin = imported("fapws._evwsgi").path
    assert origin is not None and provided.path == portable_path(origin, REPO)
    assert provided.sha256 == hashlib.sha256(origin.read_bytes()).hexdigest()
    assert list(build.patches) == ["fapws3-python3.patch"]
    patch = (REPO / "conf" / "byo" / "fapws3-python3.patch").read_bytes()
    assert build.patches["fapws3-python3.patch"] == hashlib.sha256(patch).hexdigest()
    assert "fapws3-0.11.dev.tar.gz" in build.source and load_byo_conf(REPO / "conf").systems["fapws3"].sdist
    assert json.loads((REPO / "build" / "byo" / "fapws3" / BUILD_RECORD).read_text())["name"] == "fapws3"


def test_programs_of_autotools_builds_come_before_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sbin = tmp_path / "build" / "byo" / "toy" / "prefix" / "sbin"
    sbin.mkdir(parents=True)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert search_path(tmp_path) == f"{sbin}:/usr/bin:/bin"
    monkeypatch.setenv("PATH", search_path(tmp_path))
    assert search_path(tmp_path) == f"{sbin}:/usr/bin:/bin"  # once, however often a run sets it


def test_fapws3_survives_clients_that_close_without_a_request_and_malformed_requests() -> None:
    """The crash the first full run met: a readiness probe (connect, close) made the server parse garbage."""
    if imported("fapws._evwsgi").path is None:
        pytest.skip("fapws3 was not built here (the README's set-up runs `invoke byo fapws3`)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "bottle_app.py", "fapws3", str(port)],
        cwd=REPO / "recipes" / "bottle-adapters",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        first = exchange(port, b"GET / HTTP/1.0\r\n\r\n", retry_s=10)
        for payload in [b"", b"GARBAGE\r\n\r\n", b"GET\r\n\r\n", b"\xff\xfe /x HTTP/1.0\r\n\r\n"] * 50:
            answer = exchange(port, payload)
            assert answer.startswith(b"HTTP/1.0 501 Not Implemented\r\n") if payload else answer == b"", payload
        last = exchange(port, b"GET / HTTP/1.0\r\n\r\n")
        assert server.poll() is None, f"fapws3 exited with code {server.returncode}"
        for answer in (first, last):
            assert answer.startswith(b"HTTP/1.0 200 OK\r\n") and answer.endswith(b"\r\n\r\nHello World")
    finally:
        server.terminate()
        server.wait(timeout=10)


def exchange(port: int, payload: bytes, retry_s: float = 0) -> bytes:
    """Send one payload, half-close, read the whole answer (empty when the server sends nothing)."""
    deadline = time.monotonic() + retry_s
    while True:
        try:
            connection = socket.create_connection(("127.0.0.1", port), timeout=5)
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    with connection:
        connection.sendall(payload)
        connection.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.integration
def test_a_failed_compile_keeps_the_working_build_its_record_and_its_log(tmp_path: Path) -> None:
    module = "benchsite_byo_toy"  # installed into the project's environment by the first build, removed after
    write_conf(
        tmp_path / "conf",
        f'[toy]\nkind = "python"\nsummary = "a toy"\nupstream = "https://example.org/toy"\n'
        f'provides = {{ modules = ["{module}"] }}\n',
    )
    source = tmp_path / "checkout"
    source.mkdir()
    setup = (
        "from setuptools import Extension, setup\n"
        f"setup(name='{module}', version='1.0', ext_modules=[Extension('{module}', ['toy.c'])])\n"
    )
    (source / "setup.py").write_text(setup)
    good = (
        "#include <Python.h>\n"
        f'static struct PyModuleDef m = {{PyModuleDef_HEAD_INIT, "{module}", 0, -1, 0}};\n'
        f"PyMODINIT_FUNC PyInit_{module}(void) {{ return PyModule_Create(&m); }}\n"
    )
    (source / "toy.c").write_text(good)
    folder = tmp_path / "build" / "byo" / "toy"
    try:
        working = Builder(tmp_path, tmp_path / "conf", "toy").build(source)
        record = (folder / BUILD_RECORD).read_text()
        (source / "toy.c").write_text(good.replace("return PyModule_Create(&m);", "return undeclared_thing;"))
        with pytest.raises(BenchError) as raised:
            Builder(tmp_path, tmp_path / "conf", "toy").build(source)
        message = str(raised.value)
        assert "\n" not in message and "toy.c:" in message and "error:" in message, message  # the compiler's line
        assert "undeclared_thing" in message
        assert (folder / BUILD_RECORD).read_text() == record  # the working build keeps its record...
        imported = subprocess.run(
            [sys.executable, "-c", f"import {module}; print({module}.__file__)"], text=True, capture_output=True
        )
        assert imported.returncode == 0 and working.files[0].sha256 == sha256_of(Path(imported.stdout.strip()))
        assert (folder / "build.last-good.log").is_file() and "undeclared_thing" in (folder / "build.log").read_text()
    finally:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", module], capture_output=True)
