"""A run asks a fresh interpreter what it imports; the answers last until a distribution is installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchsite.harness.basics.imports import imported, providers


def test_a_module_is_found_where_a_fresh_interpreter_loads_it_and_a_missing_one_says_why() -> None:
    import json

    assert imported("json") == imported("json")
    assert imported("json").path == Path(json.__file__) and imported("json").error is None
    missing = imported("benchsite_no_such_module")
    assert (missing.path, missing.error) == (None, "No module named 'benchsite_no_such_module'")


def test_installing_a_distribution_forgets_what_was_not_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the fresh interpreters' import path
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])  # and this one's, where distributions are looked up
    assert imported("benchsite_toy").error == "No module named 'benchsite_toy'"
    assert providers("benchsite_toy") == []

    (tmp_path / "benchsite_toy.py").write_text("")
    meta = tmp_path / "benchsite_toy-1.2.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: benchsite-toy\nVersion: 1.2\n")
    (meta / "RECORD").write_text("benchsite_toy.py,,\n")

    assert imported("benchsite_toy").path == tmp_path / "benchsite_toy.py"
    assert providers("benchsite_toy") == ["benchsite-toy 1.2"]
