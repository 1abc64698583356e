"""Interference acted on: the pre-run check, disturbed repetitions measured again and left out, busy runs
kept off verdicts and main tables. With real CPU hogs; the rule's default checked on the committed runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchsite.errors import BenchError
from benchsite.harness.basics.machine import cpu_times, cpuacct_covers_the_machine, cpuacct_ns
from benchsite.harness.hosts.placement import on_this_machine
from benchsite.harness.interference.quiet import FIRST_LOOK_S, SETTLE_ENV, boost, governor, sample, settle_wait_s
from benchsite.model.conf import SETTINGS_DEFAULTS, Settings
from benchsite.model.run import RunDocument
from benchsite.results.machines import by_machine
from benchsite.results.store import list_runs, load_view
from benchsite.results.view import RunView
from benchsite.tools.base import Repetition
from committed import COMMITTED_DATA
from conftest import INVOKE, REPO, ToyRecipes, cpu_hog, run_invoke, toy_subject

# Repetitions of about 0.3 s (2,000 requests to a one-thread toy server at ab -c 1, whose CPU is counted per
# thread in nanoseconds), four rounds of two subjects, then up to one further round: a hog on the servers' CPU
# must be seen in such short ones, which /proc/stat's 10 ms ticks could not resolve.
HOGGED_CONF = """
[settings]
settle_wait_s = 20

[profiles.timed]
requests = 2000
rounds = 4
warmup_requests = 0
max_rounds = 5
time_budget_s = 60
"""


def test_the_default_rule_marks_at_most_one_percent_of_the_quiet_calibration_runs() -> None:
    reps = [
        rep
        for path in list_runs(COMMITTED_DATA / "calibration", "full")
        for subject in load_view(path).run.subjects
        for cell in subject.cells
        for rep in cell.repetitions
    ]
    rule = Settings.from_json(SETTINGS_DEFAULTS, "defaults")
    marked = [rep for rep in reps if rule.disturbed(rep.interference_s, rep.wall_s, rep.other_busy_clock)]
    assert len(reps) == 1200 and [rep.disturbed for rep in reps].count(True) == len(marked)
    assert 0 < len(marked) <= 0.01 * len(reps)  # a quiet machine loses almost nothing: 9 of 1,200


# The one run committed from a busy machine, kept on purpose: its page lists it and reads its quiet runs.
BUSY_ON_PURPOSE = {"cherrypy-speed/20261128T013758.977172Z-full"}


def test_only_the_busy_run_kept_on_purpose_is_busy_and_every_disturbed_repetition_is_left_out() -> None:
    for path in sorted(COMMITTED_DATA.glob("*/*/run.json")):
        view = load_view(path.parent)
        assert view.busy == (f"{path.parent.parent.name}/{path.parent.name}" in BUSY_ON_PURPOSE), path
        for subject in view.run.subjects:
            for cell in subject.cells:
                summary = view.summaries[(subject.name, cell.name)]
                disturbed = [rep for rep in cell.repetitions if rep.ok and rep.disturbed]
                assert summary.repetitions_disturbed == len(disturbed)
                assert len(summary.values["rps"]) == len([rep for rep in cell.repetitions if rep.counted])


def test_frequency_policy_reads_what_the_kernel_exposes(tmp_path: Path) -> None:
    assert governor(0, tmp_path) == "not exposed" and boost(tmp_path) == "not exposed"
    (tmp_path / "cpu0" / "cpufreq").mkdir(parents=True)
    (tmp_path / "cpu0" / "cpufreq" / "scaling_governor").write_text("performance\n")
    (tmp_path / "intel_pstate").mkdir()
    (tmp_path / "intel_pstate" / "no_turbo").write_text("1\n")
    assert governor(0, tmp_path) == "performance" and boost(tmp_path) == "off"


def timed_run(toy: ToyRecipes, *options: str, settle: bool = False) -> tuple[Path, str]:
    """A timed run of the toy recipe (`settle`: waiting up to its conf's 20 s for a busy machine to settle)."""
    env = {**toy.env, SETTLE_ENV: "20"} if settle else toy.env
    result = run_invoke(
        "recipe", "toy", "--profile", "timed", "--data-dir", str(toy.data_dir), *options, env=env, timeout=240
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return list_runs(toy.data_dir / "toy")[-1], result.stderr


@pytest.mark.integration
def test_a_hog_marks_nearly_every_short_repetition_and_the_run_busy_and_a_quiet_run_stays_the_main_one(
    toy: ToyRecipes,
) -> None:
    toy.add("toy", toy_subject("--one-thread") + toy_subject("--one-thread", name="second"), conf=HOGGED_CONF)
    quiet = _quiet_run(toy)
    with cpu_hog(cpu=0, seconds=200):  # the server's CPU, for the whole run
        hogged_dir, said = timed_run(toy, "--no-wait")
    hogged = load_view(hogged_dir)
    check = hogged.run.machine_check
    assert check is not None and not check.quiet and check.busy_cpus > 0.5 and check.waited_s == 0
    assert any(name.startswith("python") for name in check.busiest)  # the hog, by name
    quiet_reps, hogged_reps = _first_rounds(quiet.run), _first_rounds(hogged.run)
    assert len(quiet_reps) == len(hogged_reps) == 8
    assert all("2000" in rep.argv for rep in quiet_reps + hogged_reps)  # short ones: 2,000 requests
    assert all(rep.other_busy_clock == "cpuacct" and rep.server_cpu_clock == "schedstat" for rep in hogged_reps)
    assert sum(rep.disturbed for rep in hogged_reps) >= 7 and not quiet.busy  # quiet: at most a quarter marked
    assert hogged.busy and hogged.run.rounds is not None and hogged.run.rounds.made == 5  # measured again
    assert "measured on a busy machine" in said and "lower bounds that decide nothing" in said
    for subject in hogged.run.subjects:
        summary = hogged.summaries[(subject.name, "c1")]
        assert summary.repetitions_disturbed == sum(rep.disturbed for rep in subject.cells[0].repetitions)
    [machine] = by_machine([quiet, hogged])
    assert [v.run.run_id for v in machine.every_run] == [quiet.run.run_id, hogged.run.run_id]  # both listed
    assert [v.run.run_id for v in machine.views] == [quiet.run.run_id]  # the quiet one read and pooled
    assert [v.run.run_id for v in machine.busy] == [hogged.run.run_id]  # labelled
    assert machine.main.run.run_id == quiet.run.run_id  # the page's tables: the quiet run
    assert not RunView(hogged.run.model_copy(update={"accepted_busy": True})).busy  # what --accept-busy records


def _quiet_run(toy: ToyRecipes, tries: int = 3) -> RunView:
    """A run the machine left alone: each try first waits (the run's own settle check) for the run's CPUs to
    be quiet; one that others still disturbed in more than a quarter of its repetitions is made again, since
    on a shared machine something the session started earlier may still take CPU (a busy run is the other
    half's subject, not this one's)."""
    for _ in range(tries):
        run_dir, said = timed_run(toy, settle=True)
        view = load_view(run_dir)
        assert view.run.machine_check is not None and "machine: load average" in said
        if not view.busy:
            return view
        shutil.rmtree(run_dir)  # not this machine's quiet run: out of the runs the rest of the test reads
    pytest.skip(f"needs a quiet machine: others took the run's CPUs through {tries} runs")


def _first_rounds(run: RunDocument) -> list[Repetition[Any]]:
    """The repetitions of the profile's first four rounds, every subject's (not the further round's)."""
    return [rep for subject in run.subjects for rep in subject.cells[0].repetitions if rep.index <= 4]


@pytest.mark.integration
def test_on_a_busy_machine_the_run_waits_for_it_to_settle_then_records_a_quiet_start(toy: ToyRecipes) -> None:
    """The hog runs until the run says it waits, then stops: the run's next look finds the machine quiet."""
    toy.add("toy", toy_subject(), conf=HOGGED_CONF.replace("rounds = 4", "rounds = 1"))
    argv = [*INVOKE, "recipe", "toy", "--profile", "timed", "--data-dir", str(toy.data_dir), "--accept-busy"]
    env = {**os.environ, **toy.env, "COLUMNS": "300", SETTLE_ENV: "20"}  # the waiting line on one line
    with cpu_hog(cpu=0, seconds=120) as hog:
        process = subprocess.Popen(
            argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        assert process.stderr is not None
        said = []
        for line in process.stderr:
            said.append(line)
            if "waiting up to" in line:
                break
        hog.kill()
    said.append(process.communicate(timeout=240)[1])
    assert process.returncode == 0, "".join(said)[-2000:]
    run = load_view(list_runs(toy.data_dir / "toy")[-1]).run
    check = run.machine_check
    assert check is not None and run.accepted_busy and "the machine is busy" in "".join(said)
    assert "waiting up to 20 s" in "".join(said) and 1 <= check.waited_s <= 21
    if not check.quiet:  # others kept the machine busy after the hog stopped: the run waited its 20 s, then began
        assert check.waited_s >= 19 and check.busy_cpus > 0, check.summary()


def test_the_floor_is_lower_where_others_time_was_counted_in_nanoseconds() -> None:
    rule = Settings.from_json(SETTINGS_DEFAULTS, "defaults")
    assert rule.disturbed(0.06, 0.2, "cpuacct") and not rule.disturbed(0.06, 0.2, "ticks")
    assert not rule.disturbed(0.06, 0.2, None) and not rule.disturbed(None, 0.2, "cpuacct")
    assert not rule.disturbed(0.015, 0.04, "cpuacct")  # over a quarter of a tiny repetition, under the floor
    assert rule.disturbed(0.15, 0.3, "ticks") and not rule.disturbed(0.05, 0.3, "cpuacct")  # under a quarter


def test_the_first_look_lasts_what_the_machines_busy_clock_needs() -> None:
    """A tenth of a second where busy time comes in nanoseconds, a quarter where it comes in 10 ms ticks."""
    settings = Settings.from_json(SETTINGS_DEFAULTS, "defaults")
    hosts = on_this_machine(REPO)
    clock = hosts.cpu_times(settings.server_cpu, settings.load_cpu).clock
    found = sample(hosts, settings, 0.0, seconds=None)
    assert found.sample_s >= FIRST_LOOK_S[clock] and found.cpus == (settings.server_cpu, settings.load_cpu)
    assert FIRST_LOOK_S["ticks"] / 0.01 >= 25  # a tick is at most 4 % of the look


def test_cpuacct_is_read_only_where_it_counts_the_whole_machine(tmp_path: Path) -> None:
    assert cpuacct_ns(tmp_path) is None and cpu_times((0,), tmp_path).clock == "ticks"
    (tmp_path / "cpuacct.usage_percpu").write_text("12 34 \n")
    assert cpuacct_ns(tmp_path) == [12, 34]
    assert not cpuacct_covers_the_machine(tmp_path)  # 46 ns: a container's own cgroup, not the machine's
    assert cpu_times((0,), tmp_path).clock == "ticks"


def test_a_pinned_busy_loop_shows_in_its_cpus_busy_time() -> None:
    before = cpu_times((1,))
    burner = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, time\nos.sched_setaffinity(0, {1})\nend = time.process_time() + 0.05\n"
            "while time.process_time() < end: pass",
        ],
        check=True,
    )
    after = cpu_times((1,))
    assert burner.returncode == 0
    if before.clock == "cpuacct":  # this machine's kernel counts busy time per CPU in nanoseconds
        assert after.busy_s - before.busy_s >= 0.05
    else:
        assert after.busy_s - before.busy_s >= 0.05 - 2 * 0.01


def test_the_settle_wait_is_the_confs_unless_the_environment_names_one(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings.from_json(SETTINGS_DEFAULTS, "defaults")
    monkeypatch.delenv(SETTLE_ENV)
    assert settle_wait_s(settings) == settings.settle_wait_s == 30.0
    monkeypatch.setenv(SETTLE_ENV, "0")  # as the test suite runs
    assert settle_wait_s(settings) == 0.0
    for wrong in ("soon", "-1", "nan", "9999"):
        monkeypatch.setenv(SETTLE_ENV, wrong)
        with pytest.raises(BenchError, match=rf"{SETTLE_ENV}=.*: give the seconds to wait for a quiet machine"):
            settle_wait_s(settings)
