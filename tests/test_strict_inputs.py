"""Strict inputs: every bad recipe, conf, published or run file is one line naming the file and the key.

Commands (invoke recipe, invoke serve) exit non-zero with one `error:` line and leave nothing
behind; the site build turns bad data into a warning naming the file and the field.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_bad_inputs import assert_clean_failure, run_toy

from benchsite.errors import BenchError
from benchsite.model.columns import read_form
from benchsite.model.recipe import load_recipe
from benchsite.model.run import RUN_FILE
from benchsite.results.store import list_runs, load_run
from committed import COMMITTED_DATA
from conftest import INVOKE, REPO, ToyRecipes, run_invoke, toy_subject

# (what is wrong, the recipe.toml subject text or matrix, the conf text, the words the error must hold)
# A profile's open-loop latency plan, all but its offered loads.
LATENCY = '[profiles.quick.latency]\ncapacity_cell = "c1"\np99_target = "10 ms"\n'

RECIPE_MISTAKES = [
    (
        "an integer in argv",
        toy_subject().replace('"{port}"', '"{port}", 5'),
        "",
        "recipe.toml: subjects[0].argv[3]: input should be a valid string (got 5)",
    ),
    (
        "a typo in a subject key",
        toy_subject().replace("expect =", "bdoy = 'x'\nexpect ="),
        "",
        "recipe.toml: unknown key 'bdoy' in subjects[0]: I know about argv, cells, expect",
    ),
    (
        "a typo in requires",
        toy_subject().replace("expect =", "requirse = ['x']\nexpect ="),
        "",
        "unknown key 'requirse' in subjects[0]",
    ),
    (
        "a template without target",
        toy_subject().replace("expect =", "templates = [{ source = 'a.conf' }]\nexpect ="),
        "",
        "recipe.toml: subjects[0].templates[0].target is missing: add it",
    ),
    (
        "an unknown role",
        toy_subject().replace("expect =", "role = 'sever'\nexpect ="),
        "",
        "recipe.toml: subjects[0]: role sever is unknown: use one of server, ceiling, backend, client",
    ),
    (
        "a port as a string",
        toy_subject(),
        '[settings]\nport = "8080"\n',
        "toy.toml: settings.port: input should be a valid integer (got '8080')",
    ),
    (
        "a timeout that is not a number",
        toy_subject(),
        '[settings]\ncell_timeout_s = "x"\n',
        "settings.cell_timeout_s: input should be a valid number (got 'x')",
    ),
    (
        "an unknown load tool",
        toy_subject() + '\n[[cells]]\ntool = "oha"\nclients = 10\n',
        "",
        "recipe.toml: cells[0]: tool oha is unknown: use one of ab, wrk, h2load, paced, client",
    ),
    (
        "a program for an unknown load tool",
        toy_subject(),
        '[settings]\ntool_paths = { oha = "/usr/bin/oha" }\n',
        "toy.toml: settings: tool_paths: oha unknown: I know about ab, wrk, h2load",
    ),
    (
        "a CPU the machine lacks",
        toy_subject(),
        "[settings]\nserver_cpu = 64\n",
        "settings: CPU 64 is not one this machine can use",
    ),
    (
        "a missing template",
        toy_subject().replace("expect =", "templates = [{ source = 'missing.conf', target = 'a.conf' }]\nexpect ="),
        "",
        "subjects[0].templates[0].source: missing.conf is not in toy/: add the file or fix the name",
    ),
    (
        "an absolute program that does not exist",
        toy_subject().replace('argv = ["{python}"', 'argv = ["/nonexistent/python"'),
        "",
        "subjects[0].argv[0]: /nonexistent/python does not exist",
    ),
    ("zero rounds", toy_subject(), "", "profiles.quick.rounds: input should be greater than or equal to 1"),
    (
        "an offered load of 0",
        toy_subject(),
        LATENCY + "fractions = [0, 0.5, 0.9]\n",
        "profiles.quick.latency.fractions[0]: input should be greater than 0 (got",
    ),
    (
        "a negative offered load",
        toy_subject(),
        LATENCY + "fractions = [-0.5, 0.5, 0.9]\n",
        "profiles.quick.latency.fractions[0]: input should be greater than 0 (got",
    ),
    (
        "an offered load that is not a number",
        toy_subject(),
        LATENCY + 'fractions = ["half", 0.5, 0.9]\n',
        "profiles.quick.latency.fractions[0]: input should be a valid number (got 'half')",
    ),
    (
        "a p99 target that is not a time",
        toy_subject(),
        LATENCY.replace('"10 ms"', '"fast"') + "fractions = [0.25, 0.5, 0.9]\n",
        "profiles.quick.latency.p99_target: 'fast' is not a time: write a positive number and a unit",
    ),
    (
        "a latency capacity cell that is not a closed loop",
        toy_subject(),
        LATENCY.replace('"c1"', '"c7"') + "fractions = [0.25, 0.5, 0.9]\n",
        "profiles.quick.latency.capacity_cell 'c7' is not a closed-loop cell of this recipe: name one of c1",
    ),
    (
        "an open-loop cell at a rate of 0",
        toy_subject()
        + '\n[[cells]]\ntool = "paced"\nname = "p"\nlabel = "p"\nrate = 0\nseconds = 1\nconnections = 1\n',
        "",
        "rate: input should be greater than 0",
    ),
    (
        "an open-loop cell at a rate beyond any this tool can hold",
        toy_subject()
        + '\n[[cells]]\ntool = "paced"\nname = "p"\nlabel = "p"\nrate = 5e6\nseconds = 1\nconnections = 1\n',
        "",
        "rate: input should be less than or equal to 1000000",
    ),
    (
        "a profile key by its old name",
        toy_subject(),
        "",
        "'repetitions' in profiles.quick is now called 'rounds' (and 1 more): rename it",
    ),
    ("a typo in a profile key", toy_subject(), "", "unknown key 'warmup_reqeusts' in profiles.quick: I know about"),
    (
        "negative requests",
        toy_subject(),
        "",
        "profiles.quick.requests: input should be greater than or equal to 1 (got -5)",
    ),
    (
        "a sequential profile with no most rounds",
        toy_subject(),
        "",
        "profiles.quick: a sequential profile needs max_rounds, the most it may make",
    ),
    (
        "a negative time bound",
        toy_subject(),
        "",
        "profiles.quick.seconds: input should be greater than or equal to 0 (got -2)",
    ),
    (
        "a time bound ab cannot keep",
        toy_subject(),
        "",
        "profiles.quick.seconds (0.5): ab bounds a repetition in whole seconds: give 0 (no bound) or a whole number",
    ),
    (
        "a smallest change that is not a share",
        toy_subject(),
        "",
        "profiles.quick.smallest_change: input should be less than or equal to 1 (got 5)",
    ),
    (
        "a sequential profile outside an A/B run or a sweep",
        toy_subject(),
        "",
        "profile 'quick' of toy is sequential: it stops once its comparisons of copies are decided, so it runs "
        "under `invoke versus` or as a release sweep",
    ),
]
MATRIX_MISTAKES = [
    (
        "strings as concurrencies",
        'concurrency = ["1", "10"]',
        "matrix.concurrency[0]: input should be a valid integer (got '1')",
    ),
    ("concurrency 0", "concurrency = [0]", "matrix.concurrency[0]: input should be greater than or equal to 1"),
    ("a typo in the matrix", "concurrency = [1]\nkeepalvie = [true]", "unknown key 'keepalvie' in matrix"),
]
CONF_EDITS: dict[str, Callable[[str], str]] = {
    "zero rounds": lambda conf: conf.replace("rounds = 1", "rounds = 0"),
    "a profile key by its old name": lambda conf: conf.replace("rounds = 1", "repetitions = 1"),
    "a typo in a profile key": lambda conf: conf.replace("warmup_requests", "warmup_reqeusts"),
    "negative requests": lambda conf: conf.replace("requests = 50", "requests = -5"),
    "a sequential profile with no most rounds": lambda conf: conf.replace(
        "rounds = 1", "rounds = 1\nsequential = true"
    ),
    "a negative time bound": lambda conf: conf.replace("rounds = 1", "rounds = 1\nseconds = -2"),
    "a time bound ab cannot keep": lambda conf: conf.replace("rounds = 1", "rounds = 1\nseconds = 0.5"),
    "a smallest change that is not a share": lambda conf: conf.replace("rounds = 1", "rounds = 1\nsmallest_change = 5"),
    "a sequential profile outside an A/B run or a sweep": lambda conf: conf.replace(
        "rounds = 1", "rounds = 1\nsequential = true\nmax_rounds = 4\ntime_budget_s = 60"
    ),
}


def write_toy(toy: ToyRecipes, case: str, subject: str, conf: str = "", matrix: str = "concurrency = [1]") -> None:
    toy.add("toy", subject, conf=conf, matrix=matrix)
    if case in CONF_EDITS:
        conf_file = toy.root / "conf" / "toy.toml"
        conf_file.write_text(CONF_EDITS[case](conf_file.read_text()))


def refusal(toy: ToyRecipes) -> str:
    """The error loading the toy recipe and its quick profile gives, in-process: what `invoke recipe` checks
    before anything starts, without the command's process around it."""
    with pytest.raises(BenchError) as refused:
        load_recipe("toy", toy.root / "recipes", toy.root / "conf").profile("quick")
    return str(refused.value)


# Checked when the run places its processes, or what the command is asked, not when the files load: through the
# command only.
AT_PLACEMENT = {"a CPU the machine lacks", "a sequential profile outside an A/B run or a sweep"}
LOADING = [mistake for mistake in RECIPE_MISTAKES if mistake[0] not in AT_PLACEMENT]


@pytest.mark.parametrize(("case", "subject", "conf", "message"), LOADING, ids=[m[0] for m in LOADING])
def test_a_bad_recipe_or_conf_is_one_line_naming_file_and_key(
    tmp_path: Path, case: str, subject: str, conf: str, message: str
) -> None:
    toy = ToyRecipes(tmp_path)  # files only, no server: the unit tier
    write_toy(toy, case, subject, conf)
    said = refusal(toy)
    assert message in said and "\n" not in said
    assert not re.search(r"(profiles\.\S+): \1", said), said  # a place is named once


@pytest.mark.parametrize(("case", "matrix", "message"), MATRIX_MISTAKES, ids=[m[0] for m in MATRIX_MISTAKES])
def test_a_bad_load_matrix_is_one_line_naming_the_key(tmp_path: Path, case: str, matrix: str, message: str) -> None:
    toy = ToyRecipes(tmp_path)
    write_toy(toy, case, toy_subject(), matrix=matrix)
    said = refusal(toy)
    assert message in said and "\n" not in said


# One mistake of each kind through the real command: one line, a non-zero exit, no traceback, nothing left.
THROUGH_THE_COMMAND = ["an integer in argv", "a port as a string", "a typo in a profile key", *AT_PLACEMENT]


@pytest.mark.parametrize("case", THROUGH_THE_COMMAND)
def test_the_command_says_a_bad_recipe_or_conf_in_one_line_and_leaves_nothing(toy: ToyRecipes, case: str) -> None:
    [(_, subject, conf, message)] = [mistake for mistake in RECIPE_MISTAKES if mistake[0] == case]
    write_toy(toy, case, subject, conf)
    assert_clean_failure(run_toy(toy, "toy"), toy, "toy", message)


def test_the_command_says_a_bad_matrix_in_one_line_and_leaves_nothing(toy: ToyRecipes) -> None:
    [(case, matrix, message)] = MATRIX_MISTAKES[:1]
    write_toy(toy, case, toy_subject(), matrix=matrix)
    assert_clean_failure(run_toy(toy, "toy"), toy, "toy", message)


@pytest.mark.integration
def test_a_claim_naming_an_unknown_cell_stops_the_run_before_any_measurement(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(COMMITTED_DATA / "cherrypy-speed", data / "cherrypy-speed")
    published = data / "cherrypy-speed" / "published.toml"
    published.write_text(
        published.read_text().replace('numerator = ["raw-wsgi", "c1"]', 'numerator = ["raw-wsgi", "c2"]', 1)
    )
    result = run_invoke(
        "recipe",
        "cherrypy-speed",
        "--profile",
        "quick",
        "--data-dir",
        str(tmp_path / "out"),
        env={"INVOKE_BENCH_DATA_DIR": str(data)},
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        f"error: {published}: claim 'raw-beats-framework-c1' names unknown cell c2: I know about c1, c1-k, c10, c10-k"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.integration
def test_a_claim_bound_given_as_text_is_one_line_naming_the_key(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(COMMITTED_DATA / "cherrypy-speed", data / "cherrypy-speed")
    published = data / "cherrypy-speed" / "published.toml"
    published.write_text(published.read_text().replace("at_least = 1.5", 'at_least = "1.5"', 1))
    result = run_invoke(
        "recipe",
        "cherrypy-speed",
        "--profile",
        "quick",
        "--data-dir",
        str(tmp_path / "out"),
        env={"INVOKE_BENCH_DATA_DIR": str(data)},
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        f"error: {published}: claims[0].at_least: input should be a valid number (got '1.5'): fix the file"
    )


def test_a_data_dir_that_is_a_file_is_one_line(tmp_path: Path, toy: ToyRecipes) -> None:
    toy.add("toy", toy_subject())
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    result = run_invoke("recipe", "toy", "--profile", "quick", "--data-dir", str(blocker), env=toy.env)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "choose a writable --data-dir" in result.stderr


# Bad values in a stored run: (what is wrong, how the document changes, the words of the error)
def _rep(document: dict[str, Any]) -> dict[str, Any]:
    return document["subjects"][0]["cells"][0]["repetitions"][0]


RUN_MISTAKES: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    (
        "NaN as req/s",
        lambda d: _rep(d)["result"].update(requests_per_s=float("nan")),
        "subjects[0].cells[0].repetitions[0].result.requests_per_s: input should be a finite number",
    ),
    (
        "infinity as req/s",
        lambda d: _rep(d)["result"].update(requests_per_s=float("inf")),
        "result.requests_per_s: input should be a finite number",
    ),
    (
        "1e308 as req/s",
        lambda d: _rep(d)["result"].update(requests_per_s=1e308),
        "result.requests_per_s: input should be less than or equal to 1000000000",
    ),
    (
        "negative req/s",
        lambda d: _rep(d)["result"].update(requests_per_s=-5.0),
        "result.requests_per_s: input should be greater than or equal to 0",
    ),
    (
        "a string where a number belongs",
        lambda d: _rep(d).update(wall_s="fast"),
        "repetitions[0].wall_s: input should be a valid number (got 'fast')",
    ),
    (
        "null where a number belongs",
        lambda d: _rep(d).update(server_cpu_s=None),
        "repetitions[0].server_cpu_s: input should be a valid number (got None)",
    ),
    (
        "an empty list of repetitions",
        lambda d: d["subjects"][0]["cells"][0].update(repetitions=[]),
        "subjects[0].cells[0].repetitions: tuple should have at least 1 item",
    ),
    ("a profile key missing", lambda d: d["profile"].pop("rounds"), "profile.rounds is missing"),
    ("a settings key missing", lambda d: d["settings"].pop("load_cpu"), "settings.load_cpu is missing"),
    (
        "an absolute raw output path",
        lambda d: _rep(d).update(raw_output="/etc/passwd"),
        "repetitions[0].raw_output: '/etc/passwd' must be a relative path inside its folder",
    ),
    (
        "a raw output path climbing out",
        lambda d: _rep(d).update(raw_output="../../../../etc/passwd"),
        "must be a relative path inside its folder",
    ),
]


@pytest.fixture
def committed_copy(tmp_path: Path) -> Path:
    """A copy of the committed cherrypy-speed run, to break."""
    run_dir = tmp_path / "cherrypy-speed" / list_runs(COMMITTED_DATA / "cherrypy-speed", "full")[-1].name
    shutil.copytree(list_runs(COMMITTED_DATA / "cherrypy-speed", "full")[-1], run_dir)
    return run_dir


@pytest.mark.parametrize(("case", "change", "message"), RUN_MISTAKES, ids=[m[0] for m in RUN_MISTAKES])
def test_a_bad_value_in_a_run_is_one_line_naming_the_file_and_field(
    committed_copy: Path, case: str, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    document = read_form(json.loads((committed_copy / RUN_FILE).read_text()))  # its repetitions as rows
    change(document)
    (committed_copy / RUN_FILE).write_text(json.dumps(document))  # json writes NaN and Infinity as such
    with pytest.raises(BenchError) as error:
        load_run(committed_copy)
    text = str(error.value)
    assert text.startswith(f"{committed_copy / RUN_FILE}: ") and message in text and "\n" not in text


@pytest.mark.parametrize("damage", ["missing", "a directory", "not UTF-8", "a link out of the run"])
def test_a_damaged_raw_output_is_one_line_naming_it(committed_copy: Path, damage: str) -> None:
    run = load_run(committed_copy)
    rep = run.subjects[0].cells[0].repetitions[0]
    raw = committed_copy / rep.raw_output
    raw.unlink()
    if damage == "a directory":
        raw.mkdir()
    elif damage == "not UTF-8":
        raw.write_bytes(b"Requests per second: \xff\xfe\n")
    elif damage == "a link out of the run":
        raw.symlink_to("/etc/passwd")
    with pytest.raises(BenchError, match="restore the run from git") as error:
        run.raw_text(rep)
    assert str(raw.name) in str(error.value) or rep.raw_output in str(error.value)


def test_a_run_file_that_is_not_utf8_is_one_line(committed_copy: Path) -> None:
    (committed_copy / RUN_FILE).write_bytes(b'{"format_version": 2, "title": "\xff"}')
    with pytest.raises(BenchError, match=r"run\.json: not UTF-8 text: restore it from git"):
        load_run(committed_copy)


@pytest.mark.integration
def test_a_docs_build_with_warnings_fails_with_one_line(tmp_path: Path) -> None:
    """Warnings are fatal in `invoke docs`: here the pages find no published figures and no method records."""
    (tmp_path / "data").mkdir()
    result = run_invoke("docs", "--output", str(tmp_path / "html"), "--data-dir", str(tmp_path / "data"))
    assert result.returncode == 1 and "Traceback" not in result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == "error: the docs build failed: fix the warnings above"
    said = result.stdout + result.stderr
    assert "cherrypy-speed/published.toml: no such file: transcribe the original figures there" in said
    assert "no such record of the method's experiments" in said


@pytest.mark.integration
@pytest.mark.parametrize(
    ("port", "message"),
    [
        ("70000", "--port '70000' is not a port: give a number from 1 to 65535, or 0 for any free port"),
        ("abc", "--port 'abc' is not a port"),
    ],
)
def test_serve_refuses_a_port_that_is_not_one(port: str, message: str) -> None:
    result = run_invoke("serve", "--port", port, timeout=30)
    assert result.returncode == 1 and result.stderr.strip().startswith(f"error: {message}")


def test_serve_refuses_a_port_in_use_and_names_the_bound_port(committed_site: Path) -> None:
    env = {"INVOKE_BENCH_BUILD_DIR": str(committed_site)}
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        result = run_invoke("serve", "--port", str(taken), env=env, timeout=30)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().startswith(f"error: cannot listen on 127.0.0.1:{taken} (Address already in use)")
    server = subprocess.Popen(
        [*INVOKE, "serve", "--port", "0"], cwd=REPO, stderr=subprocess.PIPE, text=True, env={**os.environ, **env}
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert "http://127.0.0.1:0/" not in line and line.startswith(f"serving {committed_site} on http://127.0.0.1:")


@pytest.mark.integration
def test_extra_pytest_arguments_are_split_as_a_shell_would() -> None:
    result = run_invoke(
        "test", "--args", "--collect-only -q -k 'serve_refuses and not in_use' tests/test_strict_inputs.py", timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b2/\d+ tests collected", result.stdout), result.stdout
