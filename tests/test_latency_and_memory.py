"""Latency at a given load and memory, through the real command against real servers (tests/servers/held_app.py):
an open loop sees a stall a closed loop hides, and memory is what the processes hold, workers summed."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from benchsite.harness.processes.memory import tree_memory
from benchsite.harness.processes.processes import free_port
from benchsite.model.run import RunDocument
from benchsite.results.latency import latency_figures, load_figure
from benchsite.results.store import list_runs, load_run
from benchsite.sphinxext.latency import _plain as plain_cell
from benchsite.tools.paced import PacedResult, parse_paced_output
from conftest import ToyRecipes, run_invoke

pytestmark = pytest.mark.integration

HELD_APP = Path(__file__).resolve().parent / "servers" / "held_app.py"
MIB = 2**20


def held(name: str, *args: str) -> str:
    """A subject running held_app.py on cheroot's one thread, with extra arguments."""
    extra = "".join(f', "{arg}"' for arg in args)
    return f"""
[[subjects]]
name = "{name}"
label = "{name}"
argv = ["{{python}}", "{{recipe_dir}}/held_app.py", "{{port}}"{extra}]
expect = {{ status = 200, body = "hello" }}
"""


def forked(name: str, hold_mb: int) -> str:
    """A subject running held_app under gunicorn with two workers, each holding hold_mb MiB of its own."""
    return f"""
[[subjects]]
name = "{name}"
label = "{name}"
argv = ["{{python}}", "-m", "gunicorn", "--bind=127.0.0.1:{{port}}", "--workers=2", "--chdir={{recipe_dir}}",
        "--env=HELD_APP_HOLD_MB={hold_mb}", "held_app:app"]
expect = {{ status = 200, body = "hello" }}
"""


def run_of(toy: ToyRecipes, name: str, subjects: str, conf: str, profile: str) -> RunDocument:
    directory = toy.add(name, subjects, conf=conf)
    shutil.copy(HELD_APP, directory / "held_app.py")
    done = run_invoke("recipe", name, "--profile", profile, "--data-dir", str(toy.data_dir), env=toy.env)
    assert done.returncode == 0, done.stderr
    [path] = list_runs(toy.data_dir / name)
    return load_run(path)


STALL_CONF = """
[profiles.stall]
requests = 6000
rounds = 1
warmup_requests = 500

[profiles.stall.latency]
capacity_cell = "c1"
fractions = [0.25, 0.5, 0.75]
seconds = 3
rounds = 1
connections = 256
p99_target = "10 ms"
"""


def test_an_open_loop_sees_a_stall_that_a_closed_loop_hides(toy: ToyRecipes) -> None:
    """The app stops 100 ms once a second. ab -c 1 waits with it and counts one slow request a stall; requests
    sent on schedule at half its capacity keep arriving, and each waits: the open-loop p99 holds the stall."""
    run = run_of(toy, "stall", held("stall", "--pause", "0.1"), STALL_CONF, "stall")
    [figures] = latency_figures(run)
    for load in figures.loads:  # a busy machine's run too: a figure, or a one-sided bound, never nothing
        assert plain_cell(load, 99.0) != "—", load
    subject = run.subject("stall")
    assert subject is not None and run.latency is not None
    [ab] = subject.cell("c1").repetitions  # type: ignore[union-attr]
    closed_p99 = ab.result.response_time_ms(99)  # type: ignore[union-attr]
    profile = run.latency.of("stall")
    assert profile is not None
    half = next(load for load in profile.loads if load.fraction == 0.5)
    [paced] = half.cell.repetitions
    assert isinstance(paced.result, PacedResult)
    if paced.result.tool_limited:  # a busy machine took the load tool's CPU: its lag is never the server's
        figure = load_figure(half)
        assert figure.latency_ms[99.0] is None and (figure.tool_limited or paced.disturbed), figure
        return
    assert half.cell.rate == pytest.approx(profile.capacity_rps / 2, rel=1e-3)
    open_p99_ms = paced.result.latency_at_us(99.0) / 1000  # type: ignore[operator]
    # Whatever else the machine did: the stall is in the open loop's p99 and out of the closed loop's.
    assert open_p99_ms >= 50
    assert closed_p99 is not None and closed_p99 < 25 <= open_p99_ms / 2
    # Its witness, a second sender on the server's CPU meanwhile, saw the stall too, and agrees with it.
    witness = paced.result.witness
    assert witness is not None, paced.result.witness_error
    assert witness.latency_at_us(99.0) >= 50_000  # type: ignore[operator]
    assert not load_figure(half).apart


HELD_BACK_CONF = """
[profiles.held-back]
requests = 3000
rounds = 1
warmup_requests = 300

[profiles.held-back.latency]
capacity_cell = "c1"
fractions = [1.25, 1.5, 2.0]
seconds = 2
rounds = 1
connections = 1
p99_target = "10 ms"
"""


def test_requests_waiting_for_a_slow_server_are_its_latency_not_the_tools_lag(toy: ToyRecipes) -> None:
    """One connection for more requests than one connection carries: each request waits for the server to answer
    the one before. That wait is the server's (counted from each due time), not the tool's: the tool's own lag
    stays small and its figure stands, however long the line. Whatever a busy machine gives, each load shows a
    figure, or a one-sided bound labelled as such, or says why it has none."""
    run = run_of(toy, "heldback", held("heldback"), HELD_BACK_CONF, "held-back")
    [figure] = latency_figures(run)
    stored = run.latency.of("heldback")  # type: ignore[union-attr]
    assert stored is not None
    for load, made in zip(figure.loads, stored.loads, strict=True):
        results = [rep.result for rep in made.cell.repetitions if isinstance(rep.result, PacedResult)]
        assert results, made.cell.repetitions
        for result in results:
            assert result.own_lag_us_p99 is not None and result.own_lag_us_p99 <= result.send_lag_us_p99
        quiet = [r for rep, r in zip(made.cell.repetitions, results, strict=True) if rep.counted]
        if any(not result.tool_limited for result in quiet):  # the usual outcome: the server's figure
            assert (load.p(99.0) is not None and not load.apart) or load.witness_ms, load
            waited = max(result.send_lag_us_p99 for result in quiet)
            assert waited > 1000  # it waited for the server: once the flag, now the server's latency
        shown = plain_cell(load, 99.0)
        assert shown != "—" or not any(r.latency_at_us(99.0) for r in results), (shown, load)


def test_a_sender_starved_of_its_cpu_never_passes_for_the_servers_figure(tmp_path: Path) -> None:
    """benchsite-paced at nice 19 on a CPU a spinning process holds at nice 0 gets a few per cent of it: its
    replies stand unread, its connections look busy and its requests wait in line as if for the server (found
    before version 6: own lag p99 20 ms beside a send lag of 3.1 s, 193 of 500 req/s). The time a reply stood
    unread (kernel arrival stamps) is the tool's own lag, so the load is the tool's whatever the machine gives."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip(
            "needs two CPUs: the server and the witness on one, the starved sender and the spinner on the other"
        )
    port = free_port()
    server = subprocess.Popen(["taskset", "-c", "0", sys.executable, str(HELD_APP), str(port)], cwd=tmp_path)
    spinner = subprocess.Popen(["taskset", "-c", "1", sys.executable, "-c", "while True: pass"])
    try:
        wait_for_port(port, server)
        sender = [str(Path(sys.executable).with_name("benchsite-paced")), "--rate", "500", "--duration", "2"]
        witness = ["--witness", "200", "--witness-cpu", "0"]
        done = subprocess.run(
            ["taskset", "-c", "1", "nice", "-n", "19", *sender, *witness, f"http://127.0.0.1:{port}/"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        spinner.kill()
        server.kill()
        spinner.wait()
        server.wait()
    result = parse_paced_output(done.stdout)
    assert result.own_lag_us_p99 is not None and result.witness is not None, done.stdout
    assert result.tool_limited, done.stdout


MEMORY_CONF = """
[profiles.memory]
requests = 200
rounds = 1
warmup_requests = 0
"""


def test_memory_is_what_the_processes_hold_with_forked_workers_summed(toy: ToyRecipes) -> None:
    subjects = held("twin") + held("heavy", "--hold", "64") + forked("workers", 0) + forked("heavy-workers", 32)
    run = run_of(toy, "held", subjects, MEMORY_CONF, "memory")
    idle = {subject.name: subject.idle_memory for subject in run.subjects}
    assert all(reading is not None for reading in idle.values()), idle
    twin, heavy, workers, heavy_workers = (idle[name] for name in ("twin", "heavy", "workers", "heavy-workers"))
    assert (heavy.uss_bytes - twin.uss_bytes) / MIB == pytest.approx(64, rel=0.1)  # type: ignore[union-attr]
    assert (heavy_workers.uss_bytes - workers.uss_bytes) / MIB == pytest.approx(64, rel=0.1)  # type: ignore[union-attr]
    assert workers.processes == heavy_workers.processes == 3  # type: ignore[union-attr]
    for subject in run.subjects:
        for rep in subject.cells[0].repetitions:
            assert rep.server_memory is not None and rep.server_memory.samples >= 1
            assert rep.server_memory.uss_bytes >= 0.9 * subject.idle_memory.uss_bytes  # type: ignore[union-attr]


def smaps_rollup(pid: int) -> tuple[int, int]:
    """USS and PSS of one process from /proc/PID/smaps_rollup, read here without psutil."""
    text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    kib = {key: int(value) for key, value in re.findall(r"^(\w+):\s+(\d+) kB$", text, re.M)}
    return (kib["Private_Clean"] + kib["Private_Dirty"]) * 1024, kib["Pss"] * 1024


def wait_for_port(port: int, server: subprocess.Popen[bytes]) -> None:
    """Until the server accepts a connection (it has started, its ballast held)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline and server.poll() is None, "held_app did not start"
            time.sleep(0.05)


def test_a_reading_agrees_with_the_kernels_own_rollup() -> None:
    port = free_port()
    server = subprocess.Popen([sys.executable, str(HELD_APP), str(port), "--hold", "16"])
    try:
        wait_for_port(port, server)
        reading = tree_memory(psutil.Process(server.pid))
        uss, pss = smaps_rollup(server.pid)
        assert reading is not None and reading.processes == 1
        assert reading.uss_bytes == pytest.approx(uss, rel=0.02)
        assert reading.pss_bytes == pytest.approx(pss, rel=0.02)
        assert reading.uss_bytes >= 16 * MIB
    finally:
        server.terminate()
        server.wait(timeout=10)
