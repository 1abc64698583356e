"""Bad input through the real entry point: one-line error, non-zero exit, nothing left behind."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from benchsite.model.columns import read_form
from benchsite.results.store import list_runs, load_run
from conftest import ToyRecipes, processes_mentioning, run_invoke, toy_subject

pytestmark = pytest.mark.integration


def assert_clean_failure(result: subprocess.CompletedProcess, toy: ToyRecipes, name: str, message: str) -> None:
    """Non-zero exit, exactly one 'error:' line saying message, no traceback, no run, no process."""
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert message in errors[0]
    assert "Traceback" not in result.stderr + result.stdout
    recipe_data = toy.data_dir / name
    assert list_runs(recipe_data) == []
    assert not recipe_data.exists() or list(recipe_data.iterdir()) == []
    assert processes_mentioning(str(toy.root)) == []


def run_toy(toy: ToyRecipes, name: str) -> subprocess.CompletedProcess:
    return run_invoke("recipe", name, "--profile", "quick", "--data-dir", str(toy.data_dir), env=toy.env)


def test_an_unknown_recipe_is_a_one_line_error(toy: ToyRecipes) -> None:
    toy.add("known", toy_subject())
    result = run_toy(toy, "nope")
    assert_clean_failure(result, toy, "nope", "unknown recipe 'nope': I know about known")


def test_a_subject_that_exits_at_start_costs_only_its_own_row(toy: ToyRecipes) -> None:
    failing = """
[[subjects]]
name = "broken"
label = "Broken server"
argv = ["{python}", "-c", "import sys; print('cannot read its config'); sys.exit(3)", "{port}"]
expect = { status = 200, body = "hello" }
"""
    toy.add("exits", toy_subject() + failing)
    result = run_toy(toy, "exits")
    assert result.returncode == 1, result.stderr  # a subject that is here but broken fails the run...
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: exits: Broken server (broken) failed: subject 'broken' exited with code 3 at start")
    assert last.endswith("or pass --keep-going to accept a run without it")
    [run_dir] = list_runs(toy.data_dir / "exits")  # ...and the run is kept, with the reason in its row
    document = json.loads((run_dir / "run.json").read_text())
    assert [s["name"] for s in document["subjects"]] == ["toy"]
    [broken] = document["skipped"]
    assert (
        broken["name"] == "broken"
        and broken["reason"] == "it did not start or did not answer correctly on this machine"
    )
    assert "subject 'broken' exited with code 3 at start (cannot read its config)" in broken["detail"]
    assert processes_mentioning(str(toy.root)) == []


def test_a_subject_with_the_wrong_body_fails_the_run_unless_told_to_keep_going(toy: ToyRecipes) -> None:
    toy.add(
        "wrong",
        toy_subject() + toy_subject("--body", "goodbye", name="wrong").replace("[[subjects]]", "\n[[subjects]]"),
    )
    result = run_toy(toy, "wrong")
    assert result.returncode == 1 and "answered GET / with body" in result.stderr.splitlines()[-1], result.stderr
    kept = run_invoke(
        "recipe", "wrong", "--profile", "quick", "--data-dir", str(toy.data_dir), "--keep-going", env=toy.env
    )
    assert kept.returncode == 0, kept.stderr
    assert len(list_runs(toy.data_dir / "wrong")) == 2  # both runs kept, the wrong subject in its row
    assert processes_mentioning(str(toy.root)) == []


def test_a_port_already_taken_is_refused_before_starting(toy: ToyRecipes) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        toy.add("taken", toy_subject(), conf=f"[settings]\nport = {port}\n")
        result = run_toy(toy, "taken")
    assert_clean_failure(result, toy, "taken", f"port {port} on 127.0.0.1 is already in use")


def test_a_subject_answering_500_is_not_measured(toy: ToyRecipes) -> None:
    toy.add("fails", toy_subject("--status", "500"))
    result = run_toy(toy, "fails")
    assert_clean_failure(result, toy, "fails", "answered GET / with status 500 (expected 200)")


def test_malformed_ab_output_twice_in_a_row_stops_the_run(toy: ToyRecipes, tmp_path: Path) -> None:
    fake_ab = tmp_path / "not-ab"
    fake_ab.write_text("#!/bin/sh\necho 'Segmentation fault? no report here'\n")
    fake_ab.chmod(0o755)
    toy.add("garbled", toy_subject(), conf=f'[settings]\ntool_paths = {{ ab = "{fake_ab}" }}\n')
    conf = toy.root / "conf" / "garbled.toml"
    conf.write_text(conf.read_text().replace("rounds = 1", "rounds = 2"))
    result = run_toy(toy, "garbled")
    assert_clean_failure(result, toy, "garbled", "printed output this harness cannot read")
    assert "twice in a row" in result.stderr


def test_one_unreadable_report_fails_its_repetition_and_the_run_goes_on(toy: ToyRecipes, tmp_path: Path) -> None:
    """A report the harness cannot read once (the real ab after it) costs that repetition alone, its raw output
    kept; the run's other repetitions are measured and the run is written."""
    marker = tmp_path / "garbled-once"
    once_ab = tmp_path / "ab-garbled-once"
    once_ab.write_text(
        f'#!/bin/sh\ncase " $* " in *" -n "*) if [ ! -e "{marker}" ]; then touch "{marker}"; echo "no report here"; '
        "exit 0; fi;; esac\n"
        f'exec {shutil.which("ab")} "$@"\n'
    )
    once_ab.chmod(0o755)
    toy.add("once", toy_subject(), conf=f'[settings]\ntool_paths = {{ ab = "{once_ab}" }}\n')
    conf = toy.root / "conf" / "once.toml"
    conf.write_text(conf.read_text().replace("rounds = 1", "rounds = 2"))
    result = run_toy(toy, "once")
    assert result.returncode == 0, result.stderr
    (run_dir,) = list_runs(toy.data_dir / "once")
    repetitions = [rep for _, cell in load_run(run_dir).every_cell() for rep in cell.repetitions]
    unreadable = [rep for rep in repetitions if rep.error and "cannot read" in rep.error]
    assert len(unreadable) == 1 and unreadable[0].result is None
    assert (run_dir / unreadable[0].raw_output).read_text() == "no report here\n"
    assert any(rep.result is not None for rep in repetitions)
    assert processes_mentioning(str(toy.root)) == []


def test_an_unknown_setting_lists_the_known_ones(toy: ToyRecipes) -> None:
    toy.add("typo", toy_subject(), conf="[settings]\nserver_cpus = 0\n")
    result = run_toy(toy, "typo")
    assert_clean_failure(
        result, toy, "typo", "unknown key 'server_cpus' in settings: I know about busy_share, cell_timeout_s"
    )


def test_an_ab_stall_is_kept_as_a_failed_cell_and_the_run_completes(toy: ToyRecipes) -> None:
    # Three answers (readiness, verification, the keep-alive probe), then the server accepts and never replies.
    toy.add("stalls", toy_subject("--hang-after", "3"), conf="[settings]\nsocket_timeout_s = 1\n")
    result = run_toy(toy, "stalls")
    assert result.returncode == 0, result.stderr
    [run_dir] = list_runs(toy.data_dir / "stalls")
    rep = read_form(json.loads((run_dir / "run.json").read_text()))["subjects"][0]["cells"][0]["repetitions"][0]
    assert rep["result"] is None
    assert rep["exit_code"] == 119
    assert rep["error"] == "ab exited with code 119: apr_pollset_poll: The timeout specified has expired (70007)"
    assert processes_mentioning(str(toy.root)) == []


def test_a_subject_whose_module_is_missing_is_skipped_with_its_reason(toy: ToyRecipes) -> None:
    absent = toy_subject(name="absent").replace(
        "expect = {", 'requires = ["no_such_module_here"]\nskip_reason = "it was never installed"\nexpect = {'
    )
    toy.add("optional", toy_subject() + absent)
    result = run_toy(toy, "optional")
    assert result.returncode == 0, result.stderr
    [run_dir] = list_runs(toy.data_dir / "optional")
    document = json.loads((run_dir / "run.json").read_text())
    assert [s["name"] for s in document["subjects"]] == ["toy"]
    [skipped] = document["skipped"]
    assert skipped["reason"] == "it was never installed"
    assert skipped["detail"] == ("import no_such_module_here failed: No module named 'no_such_module_here'")


def test_a_template_with_an_unknown_field_is_a_one_line_error(toy: ToyRecipes) -> None:
    directory = toy.add(
        "templated",
        toy_subject().replace(
            "expect = {", 'templates = [{ source = "server.conf", target = "server.conf" }]\nexpect = {'
        ),
    )
    (directory / "server.conf").write_text("listen $port\nroot $wrokdir\n")
    result = run_toy(toy, "templated")
    assert_clean_failure(result, toy, "templated", "server.conf: unknown field $wrokdir: I know about $bin")


def test_a_server_command_without_its_port_is_refused_at_once(toy: ToyRecipes) -> None:
    toy.add("portless", toy_subject().replace('"{port}"', '"8080"'))
    result = run_toy(toy, "portless")
    assert_clean_failure(result, toy, "portless", "the command of 'toy' never uses {port}")


def test_a_start_failure_shows_the_error_line_and_a_command_that_runs_as_printed(toy: ToyRecipes) -> None:
    noisy = toy_subject(name="noisy").replace(
        'argv = ["{python}", "{recipe_dir}/toy_server.py", "{port}"]',
        'argv = ["{python}", "-c", "import sys; print(\'ImportError: no module named app\'); '
        'print(*[\'frame\'] * 9, sep=chr(10)); sys.exit(1)", "{port}"]',
    )
    toy.add("noisy", noisy)
    result = run_toy(toy, "noisy")
    assert_clean_failure(result, toy, "noisy", "ImportError: no module named app")
    assert f"run its command by hand to see why: cd {toy.root / 'recipes' / 'noisy'} && " in result.stderr
