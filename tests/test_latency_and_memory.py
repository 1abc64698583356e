"""Latency at a given load and memory, through the real command against real servers (tests/servers/held_app.py):
an open loop sees a stall a closed loop hides, and memory is what the processes hold, workers summed."""

from __future__ import annotations

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
from benchsite.results.latency import fmt_ms, latency_figures, load_figure
from benchsite.results.store import list_runs, load_run
from benchsite.sphinxext.latency import _plain as plain_cell
from benchsite.tools.paced import PacedResult
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


def test_a_tool_held_back_by_too_few_connections_marks_every_load_as_its_own_beside_its_witness(
    toy: ToyRecipes,
) -> None:
    """One connection for more requests than one connection carries: requests wait for the tool's own connection,
    a wait it counts as its lag, so every load is the tool's; the witness, with connections to spare, says what the
    server did meanwhile, and the page shows its figure where the tool's would have been."""
    run = run_of(toy, "heldback", held("heldback"), HELD_BACK_CONF, "held-back")
    figures = latency_figures(run)
    assert [figure.subject for figure in figures] == ["heldback"]
    stored = run.latency.of("heldback")  # type: ignore[union-attr]
    assert stored is not None
    for load, made in zip(figures[0].loads, stored.loads, strict=True):
        results = [rep.result for rep in made.cell.repetitions]
        assert all(isinstance(result, PacedResult) and result.tool_limited for result in results)
        assert load.tool_limited and load.latency_ms[99.0] is None, load
        witness = load.witness_ms[99.0]
        assert load.witness_ms[50.0] is not None and witness is not None, load
        shown = plain_cell(load, 99.0)
        assert shown.startswith("— (") and shown.endswith(f"; witness {fmt_ms(witness.value)})"), shown


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


def test_a_reading_agrees_with_the_kernels_own_rollup() -> None:
    port = free_port()
    server = subprocess.Popen([sys.executable, str(HELD_APP), str(port), "--hold", "16"])
    try:
        deadline = time.monotonic() + 20
        while True:  # until it accepts: its ballast is held by then
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "held_app did not start"
                time.sleep(0.05)
        reading = tree_memory(psutil.Process(server.pid))
        uss, pss = smaps_rollup(server.pid)
        assert reading is not None and reading.processes == 1
        assert reading.uss_bytes == pytest.approx(uss, rel=0.02)
        assert reading.pss_bytes == pytest.approx(pss, rel=0.02)
        assert reading.uss_bytes >= 16 * MIB
    finally:
        server.terminate()
        server.wait(timeout=10)
