"""The code passes ruff (rules in pyproject.toml)."""

import subprocess
import sys

from conftest import REPO


def test_ruff_finds_nothing_to_fix() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."],
                            cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
