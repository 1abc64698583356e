"""The open-loop tool's C loop and reply parser built under AddressSanitizer and UndefinedBehaviorSanitizer, then
run on generated replies and on real loads: the sanitizers report nothing (a report ends the run non-zero)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.integration
SOURCES = [REPO / "benchsite" / "tools" / name for name in ("_pacer.c", "_http_reply.c")]


def sanitized_build(target: Path) -> Path:
    """The extension compiled with both sanitizers into `target`."""
    library = target / "_pacer.so"
    argv = ["gcc", "-shared", "-fPIC", "-g", "-O1", "-fno-omit-frame-pointer", "-Wall", "-Wextra", "-Werror"]
    argv += ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", f"-I{sysconfig.get_paths()['include']}"]
    subprocess.run([*argv, *map(str, SOURCES), "-o", str(library)], check=True, capture_output=True, timeout=300)
    return library


def test_the_c_loop_under_address_and_undefined_behaviour_sanitizers_reports_nothing(tmp_path: Path) -> None:
    library = sanitized_build(tmp_path)
    asan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True, check=True)
    env = {
        **os.environ,
        "LD_PRELOAD": asan.stdout.strip(),
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=99",  # the interpreter's own allocations stay
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=98",
    }
    script = REPO / "tests" / "sanitized" / "run_under_sanitizers.py"
    result = subprocess.run(
        [sys.executable, str(script), str(library), "1500"], capture_output=True, text=True, env=env, timeout=900
    )
    said = result.stdout + result.stderr
    assert result.returncode == 0 and "sanitized: clean" in result.stdout, said[-3000:]
    assert "runtime error" not in said and "AddressSanitizer" not in said, said[-3000:]
