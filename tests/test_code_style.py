"""The code passes ruff (lint and format) and mypy, and its layers import one way."""

from __future__ import annotations

import ast
import graphlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ahead import AHEAD, Job
from conftest import REPO

PACKAGE = REPO / "benchsite"
# Each layer may import only the layers beneath it (and itself): records, tools, model, results, then
# the Sphinx extension and the harness side by side, and the command layer (what tasks.py calls) on top of
# the harness. The errors and the user's cache folder are beneath them all. No exceptions.
BASE = {"errors", "usercache"}
ALLOWED = {
    "usercache": {"usercache"},
    "records": BASE | {"records"},
    "tools": BASE | {"records", "tools"},
    "model": BASE | {"records", "tools", "model"},
    "results": BASE | {"records", "tools", "model", "results"},
    "sphinxext": BASE | {"records", "tools", "model", "results", "sphinxext"},
    "harness": BASE | {"records", "tools", "model", "results", "harness"},
    "commands": BASE | {"records", "tools", "model", "results", "harness", "commands"},
    "launch": {"launch", "tools"},  # the load programs' entry points: nothing before their interrupt handler
}


def run_tool(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing_to_fix() -> None:
    result = run_tool("ruff", "check", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_is_formatted_by_ruff() -> None:
    result = run_tool("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


AHEAD.add("mypy", Job("mypy_report", lambda: run_tool("mypy"), seconds=5))  # 1.3 s once its cache is warm


@pytest.fixture
def mypy_report() -> subprocess.CompletedProcess:
    return AHEAD.take("mypy")


def test_mypy_finds_no_type_errors(mypy_report: subprocess.CompletedProcess) -> None:
    result = mypy_report
    assert result.returncode == 0 and "Success: no issues found" in result.stdout, result.stdout + result.stderr


RELATIVE, DYNAMIC = "<a relative import>", "<an import by a name computed at run time>"  # no layer allows them


def _imported(node: ast.AST, package: Path) -> set[str]:
    """What one node imports, as dotted names: `import benchsite.x`, `from benchsite.x import y`,
    `from benchsite import x` (x, where it is a module), importlib.import_module("benchsite.x") and __import__."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if isinstance(node, ast.ImportFrom):
        if node.level:
            return {RELATIVE}
        if node.module == "benchsite":
            modules = {alias.name for alias in node.names}
            return {f"benchsite.{m}" for m in modules if (package / m).is_dir() or (package / f"{m}.py").is_file()}
        return {node.module} if node.module else set()
    if isinstance(node, ast.Call) and _names(node.func)[:1] in (["import_module"], ["__import__"]) and node.args:
        name = node.args[0]
        return {name.value} if isinstance(name, ast.Constant) and isinstance(name.value, str) else {DYNAMIC}
    return set()


def package_imports(path: Path, package: Path = PACKAGE) -> set[str]:
    """The benchsite modules a file imports, relative to the package (e.g. "run.processes"), and any import
    that cannot be placed (relative, or by a computed name)."""
    names = set().union(*(_imported(node, package) for node in ast.walk(ast.parse(path.read_text()))))
    return {name.removeprefix("benchsite.") for name in names if name.startswith("benchsite.") or name.startswith("<")}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    assert layer_faults(layer) == []


# The harness's own floors, lowest first: each folder imports only itself and the folders beneath it.
HARNESS_FLOORS = (
    "processes",  # processes started, stopped, measured; the machine lock; signals
    "basics",  # the environment, the machine's CPU times, probes, the reporter, a subject's templates
    "builds",  # programs built from source (invoke byo)
    "variants",  # the copies an A/B run or a sweep measures
    "hosts",  # where the roles run: this machine, or hosts over SSH
    "interference",  # the quiet check before a run
    "session",  # one run's context, its servers, a load's command, one repetition
    "profiling",  # flame graphs and instruction counts after the rounds
    "engine",  # the run's phases, in order
    "experiments",  # benchmarks of the harness itself
)


def layer_faults(layer: str, package: Path = PACKAGE) -> list[str]:
    """Every import in a layer of a layer it may not import (or of something no layer names)."""
    single = package / f"{layer}.py"
    files = [single] if single.is_file() else sorted((package / layer).rglob("*.py"))
    return [
        f"{path.relative_to(package.parent)} imports benchsite.{name}"
        for path in files
        for name in sorted(package_imports(path, package))
        if not any(name == allowed or name.startswith(allowed + ".") for allowed in ALLOWED[layer])
    ]


@pytest.mark.parametrize(
    "added",
    [
        "from benchsite import harness",
        "from benchsite.harness import engine",
        "import benchsite.harness.engine.runner",
        "from ..harness.engine import runner",
        "import importlib\nrunner = importlib.import_module('benchsite.harness.engine.runner')",
        "runner = __import__('benchsite.harness.engine.runner')",
        "import importlib\nrunner = importlib.import_module('benchsite.' + 'harness')",
    ],
)
def test_the_layer_rule_finds_every_way_of_importing_a_layer_above(tmp_path: Path, added: str) -> None:
    """tools/ importing the harness, written each way Python allows: each is found, with its file."""
    package = tmp_path / "benchsite"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    assert layer_faults("tools", package) == []
    lowest = package / "tools" / "base.py"
    lowest.write_text(lowest.read_text() + f"\n{added}  # noqa\n")
    found = layer_faults("tools", package)
    assert len(found) == 1 and found[0].startswith("benchsite/tools/base.py imports benchsite."), found
    assert "harness" in found[0] or "<" in found[0], found


def test_ruff_bans_relative_imports(tmp_path: Path) -> None:
    """TID252: a relative import is refused by the linter too, before any rule reads the imports."""
    module = tmp_path / "pkg" / "mod.py"
    module.parent.mkdir()
    module.write_text("from . import other\n\nprint(other)\n")
    result = run_tool("ruff", "check", "--config", str(REPO / "pyproject.toml"), str(module))
    assert result.returncode == 1 and "TID252" in result.stdout, result.stdout + result.stderr


def harness_back_arrows(package: Path) -> list[str]:
    """Every import in the harness of a folder above the importing one's floor (or of one no floor names)."""
    faults = []
    for path in sorted((package / "harness").rglob("*.py")):
        folder = path.relative_to(package / "harness").parts[0]
        if folder not in HARNESS_FLOORS:
            faults.append(f"{path.relative_to(package.parent)}: harness/{folder} stands on no floor")
            continue
        beneath = HARNESS_FLOORS[: HARNESS_FLOORS.index(folder) + 1]
        for name in package_imports(path):
            parts = name.split(".")
            if parts[0] == "harness" and (len(parts) < 2 or parts[1] not in beneath):
                faults.append(f"{path.relative_to(package.parent)} imports benchsite.{name}")
    return faults


def test_each_harness_folder_imports_only_the_floors_beneath_it() -> None:
    assert harness_back_arrows(PACKAGE) == []
    assert {
        path.name for path in (PACKAGE / "harness").iterdir() if path.is_dir() and path.name != "__pycache__"
    } == set(HARNESS_FLOORS)


def test_the_floor_rule_finds_an_import_of_a_floor_above(tmp_path: Path) -> None:
    """An import added from a lower floor to a higher one (here processes → engine) is found, with its file."""
    package = tmp_path / "benchsite"
    shutil.copytree(PACKAGE / "harness", package / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    lowest = package / "harness" / "processes" / "marks.py"
    lowest.write_text(lowest.read_text() + "\nfrom benchsite.harness.engine.runner import run_recipe  # noqa\n")
    assert harness_back_arrows(package) == [
        "benchsite/harness/processes/marks.py imports benchsite.harness.engine.runner"
    ]


def _names(node: ast.AST) -> list[str]:
    """The last part of every name in an expression (`ab.AbCell | WrkCell` → AbCell, WrkCell)."""
    return [
        n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node) if isinstance(n, ast.Name | ast.Attribute)
    ]


def _tested_types(node: ast.AST) -> list[str]:
    """The names a node tests an object's type against: isinstance(x, T), `case T()`, type(x) is / == T; and
    for getattr(cell, "name", default), the object asked, as a cell's fields differ by tool."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "isinstance" and len(node.args) == 2:
            return _names(node.args[1])
        if node.func.id in ("getattr", "hasattr") and node.args and _names(node.args[0]):
            return [
                f"{_names(node.args[0])[-1].capitalize()}" + ("Cell" if "cell" in ast.unparse(node.args[0]) else "")
            ]
    if isinstance(node, ast.MatchClass):
        return _names(node.cls)
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        if any(isinstance(side, ast.Call) and _names(side.func) == ["type"] for side in sides):
            return [name for side in sides if not isinstance(side, ast.Call) for name in _names(side)]
    return []


def cell_type_tests(files: list[Path], root: Path = REPO) -> list[str]:
    """Every test of a tool's cell (or cell run) by its class, and every getattr or hasattr on a cell: what
    differs between the tools is asked of the cell."""
    return [
        f"{path.relative_to(root)}:{node.lineno}"
        for path in files
        for node in ast.walk(ast.parse(path.read_text()))
        if any(name.endswith(("Cell", "CellRun")) for name in _tested_types(node))
    ]


def test_no_type_test_on_a_tools_cell_outside_tools() -> None:
    """What differs between the load tools is asked of the tool's cell (tools/ owns its quirks)."""
    outside = [path for path in PACKAGE.rglob("*.py") if "tools" not in path.relative_to(PACKAGE).parts]
    assert cell_type_tests(outside) == []
    assert cell_type_tests(sorted((PACKAGE / "tools").rglob("*.py")))  # the rule finds those tools/ keeps


@pytest.mark.parametrize(
    "added",
    [
        "def f(cell):\n    return type(cell) is AbCell",
        "def f(cell):\n    return type(cell) == WrkCell",
        "def f(cell):\n    return getattr(cell, 'keepalive', False)",
        "def f(cell):\n    return hasattr(cell, 'concurrency')",
        "def f(cell):\n    return isinstance(cell, AbCell)",
    ],
)
def test_the_cell_type_rule_finds_each_way_of_asking_a_cell_its_tool(tmp_path: Path, added: str) -> None:
    module = tmp_path / "module.py"
    module.write_text(added + "\n")
    assert cell_type_tests([module], tmp_path) == ["module.py:2"]


# Calls that take any number of positional arguments, by design: rich's Table.add_row(*cells), docutils'
# nodes.X(rawsource, text, *children), Invoke's Collection(*tasks).
VARARGS_CALLS = {"add_row", "paragraph", "Collection"}


def long_calls(files: list[Path], root: Path = REPO) -> list[str]:
    """Every call passing more than four positional arguments (but the known *args callees)."""
    return [
        f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node.func)}"
        for path in files
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and len(node.args) > 4 and _names(node.func)[0] not in VARARGS_CALLS
    ]


def test_no_call_in_the_package_or_tasks_passes_more_than_four_positional_arguments() -> None:
    """A phase takes the run's context; anything longer is named at the call, in every package and tasks.py."""
    assert long_calls([*sorted(PACKAGE.rglob("*.py")), REPO / "tasks.py"]) == []


def test_the_argument_rule_finds_a_long_call_in_any_package(tmp_path: Path) -> None:
    module = tmp_path / "recipe.py"
    module.write_text("run_recipe(1, 2, 3, 4, 5)\ntable.add_row(1, 2, 3, 4, 5)\nrun(1, 2, 3, 4, five=5)\n")
    assert long_calls([module], tmp_path) == ["recipe.py:1 run_recipe"]


def test_a_profile_is_read_as_sequential_in_two_places_of_its_own_class() -> None:
    """Fixed or sequential is chosen once: the profile checks a sequential profile fits and says what steers its
    further rounds; the comparison design and the rounds ask that, never `sequential` itself."""
    reads = [
        f"{path.relative_to(REPO)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "sequential" and isinstance(node.ctx, ast.Load)
    ]
    assert len(reads) <= 2 and {read.split(":")[0] for read in reads} == {"benchsite/model/conf.py"}, reads


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_module_imports_itself_through_others() -> None:
    """No import cycle between the package's modules, counting imports inside functions too."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        wanted = set()
        for imported in package_imports(path):
            # "from benchsite.tools import ab" names a module; "from benchsite.tools.ab import X" its parent
            wanted.add(imported if imported in modules else imported.rsplit(".", 1)[0])
        graph[name] = {m for m in wanted if m in modules and m != name and not name.startswith(m + ".")}
    sorter = graphlib.TopologicalSorter(graph)
    try:
        sorter.prepare()
    except graphlib.CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")


def test_no_module_in_the_package_is_over_400_lines() -> None:
    files = [*PACKAGE.rglob("*.py"), REPO / "tasks.py"]
    long = {str(p.relative_to(REPO)): n for p in files if (n := len(p.read_text().splitlines())) > 400}
    assert long == {}


def test_tasks_py_only_parses_and_calls_no_task_body_over_30_lines() -> None:
    tree = ast.parse((REPO / "tasks.py").read_text())
    tasks = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.decorator_list]
    assert len(tasks) >= 15
    long = {node.name: node.end_lineno - node.body[0].lineno + 1 for node in tasks}  # type: ignore[operator]
    assert {name: lines for name, lines in long.items() if lines > 30} == {}
    reaching = {
        f"{node.name}: {found.module}"
        for node in tasks
        for found in ast.walk(node)
        if isinstance(found, ast.ImportFrom)
        and found.module
        and found.module.startswith("benchsite.")
        and not found.module.startswith(("benchsite.commands.", "benchsite.errors"))
    }
    assert reaching == set(), "a task's body reaches past commands/"


def test_the_sphinx_extension_loads_without_the_runner_or_psutil() -> None:
    probe = (
        "import sys\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'psutil' or name.startswith('benchsite.harness'):\n"
        "            raise ImportError('the site must not import ' + name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "import benchsite.sphinxext\n"
        "print(sorted(m for m in sys.modules if m.startswith('benchsite.')))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "benchsite.sphinxext.results" in result.stdout and "benchsite.harness" not in result.stdout


NOT_A_RACE = "# cannot race:"  # a fixed delay a test may keep, with the reason it decides nothing


def fixed_delays(tree: ast.AST) -> list[ast.Call]:
    """Calls to time.sleep and threading.Timer that are not a poll (a `while` loop waiting for its event)."""
    found = []

    def visit(node: ast.AST, in_poll: bool) -> None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if (node.func.attr, getattr(node.func.value, "id", "")) in {("sleep", "time"), ("Timer", "threading")}:
                if not in_poll:
                    found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child, in_poll or isinstance(node, ast.While))

    visit(tree, False)
    return found


def test_no_test_waits_a_fixed_time_in_place_of_an_event() -> None:
    """A fresh machine is slower than the one a test was written on: a test polls for what it waits for (a
    file, a process, a port), and a fixed delay is there only where the outcome holds whenever it ends."""
    unexplained = []
    for path in sorted((REPO / "tests").glob("*.py")):
        lines = path.read_text().splitlines()
        for call in fixed_delays(ast.parse("\n".join(lines))):
            if NOT_A_RACE not in lines[call.lineno - 1]:
                unexplained.append(f"{path.name}:{call.lineno}: {lines[call.lineno - 1].strip()}")
    assert unexplained == []


def test_the_fixed_delay_rule_finds_a_sleep_before_a_signal() -> None:
    racing = "process = start()\ntime.sleep(0.15)\nprocess.send_signal(SIGHUP)\n"
    polling = "while not marker.exists():\n    time.sleep(0.01)\n"
    assert [call.lineno for call in fixed_delays(ast.parse(racing))] == [2]
    assert fixed_delays(ast.parse(polling)) == []
