"""Flame graphs: py-spy samples a real Python server by PID under a load window after the timed rounds."""

from __future__ import annotations

import pytest

from benchsite.harness.profiling.flames import py_spy
from benchsite.results.flames import flames_of, top_functions
from benchsite.results.store import list_runs
from conftest import ToyRecipes, processes_mentioning, run_invoke, toy_subject

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(py_spy() is None, reason="needs py-spy (requirements.txt)"),
]


def test_a_python_server_gets_a_flame_graph_and_its_functions_counted(toy: ToyRecipes) -> None:
    toy.add("flamed", toy_subject(), conf='[flame]\nprofiles = ["quick"]\ncells = ["c1"]\nseconds = 1\n')
    result = run_invoke("recipe", "flamed", "--profile", "quick", "--data-dir", str(toy.data_dir), env=toy.env)
    assert result.returncode == 0, result.stderr
    assert processes_mentioning(str(toy.root)) == []
    [run_dir] = list_runs(toy.data_dir / "flamed")
    [flame] = flames_of(run_dir)
    assert (flame.subject, flame.cell, flame.note) == ("toy", "c1", None)
    assert flame.svg is not None and flame.svg.read_text().lstrip().startswith("<?xml")
    assert str(toy.root) not in flame.svg.read_text() and "py-spy record --pid" in flame.svg.read_text()
    assert flame.stacks is not None
    total, top = top_functions(flame.stacks.read_text())
    assert total > 0 and top and sum(share.share for share in top) <= 1.0 + 1e-9
    assert all("(" in share.function for share in top)  # "function (file)"


def test_collapsed_stacks_are_counted_by_their_innermost_function() -> None:
    stacks = "main (a.py:1);serve (b.py:2);recv (c.py:9) 30\nmain (a.py:1);serve (b.py:2);recv (c.py:12) 10\n"
    stacks += "main (a.py:1);handle (d.py:3) 60\nnot a stack line\n"
    total, top = top_functions(stacks)
    assert total == 100
    assert [(share.function, share.share) for share in top] == [("handle (d.py)", 0.6), ("recv (c.py)", 0.4)]
