"""The code passes ruff (lint and format) and mypy, and its layers import one way."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / "benchsite"
# Each layer may import only these layers of the package (and itself).
ALLOWED = {
    "tools": {"errors", "model.base", "tools"},
    "model": {"errors", "model", "tools"},
    "results": {"errors", "model", "tools", "results"},
    "sphinxext": {"errors", "model", "tools", "results", "sphinxext"},
    "run": {"errors", "model", "tools", "results", "run"},
}


def run_tool(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing_to_fix() -> None:
    result = run_tool("ruff", "check", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_is_formatted_by_ruff() -> None:
    result = run_tool("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_finds_no_type_errors() -> None:
    result = run_tool("mypy")
    assert result.returncode == 0 and "Success: no issues found" in result.stdout, result.stdout + result.stderr


def package_imports(path: Path) -> set[str]:
    """The benchsite modules a file imports, relative to the package (e.g. "run.processes")."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {name.removeprefix("benchsite.") for name in names if name.startswith("benchsite.")}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for name in package_imports(path):
            assert any(name == allowed or name.startswith(allowed + ".") for allowed in ALLOWED[layer]), (
                f"{path.relative_to(REPO)} imports benchsite.{name}"
            )


def test_the_sphinx_extension_loads_without_the_runner_or_psutil() -> None:
    probe = (
        "import sys\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'psutil' or name.startswith('benchsite.run'):\n"
        "            raise ImportError('the site must not import ' + name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "import benchsite.sphinxext\n"
        "print(sorted(m for m in sys.modules if m.startswith('benchsite.')))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "benchsite.sphinxext.directives" in result.stdout and "benchsite.run" not in result.stdout
