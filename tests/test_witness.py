"""benchsite-paced's witness: it starts at ordinary priority (real-time for its schedule alone), so its start
freezes no one on the server's CPU; it dies with the tool; a witness that never says it is ready is stopped; a
CPU the machine lacks and an interrupt at any moment are one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from test_paced_faults import OK, PROGRAM, serving

from benchsite.tools import paced_witness
from benchsite.tools.paced import parse_paced_output
from benchsite.tools.paced_witness import Witness

pytestmark = pytest.mark.integration
GAPS = Path(__file__).parent / "servers" / "gap_detector.py"


def wait_until(ready, timeout_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    """Poll for an event (a process's state), never longer than the timeout."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, "the event never came"
        time.sleep(0.005)


def test_a_silent_witness_program_is_stopped_within_its_time(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(paced_witness, "READY_WITHIN_S", 1.0)
    silent = tmp_path / "silent-witness"
    silent.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(600)\n")
    silent.chmod(0o755)
    witness = Witness(["--rate", "1"], None, program=str(silent))
    assert witness.process.wait(timeout=30) is not None
    assert witness.early_error == "no ready line within 1 s: stopped"
    assert "no ready line within 1 s" in witness.report(5)


@pytest.mark.parametrize("cpu", ["99", "-1", "one"])
def test_a_witness_cpu_the_machine_lacks_is_one_line(cpu: str) -> None:
    result = subprocess.run(
        [PROGRAM, "--rate", "10", "--duration", "1", "--witness", "5", "--witness-cpu", cpu, "http://127.0.0.1:9/"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "--witness-cpu" in lines[0] and "give one of 0-" in lines[0]


def test_a_killed_tool_takes_its_witness_with_it() -> None:
    with serving(OK) as server:
        argv = [PROGRAM, "--rate", "20", "--duration", "60", "--witness", "5", server.url]
        tool = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until(
                lambda: any("benchsite-witness" in " ".join(c.cmdline()) for c in psutil.Process(tool.pid).children())
            )
            (witness,) = psutil.Process(tool.pid).children()
            wait_until(server.accepted.is_set)  # the load is under way
            tool.kill()
            tool.wait(timeout=30)
            gone, alive = psutil.wait_procs([witness], timeout=30)
        finally:
            tool.kill()
        assert gone and not alive, "the witness outlived its tool"


def test_an_interrupt_while_the_tool_still_imports_is_one_line() -> None:
    """SIGINT once numpy is being loaded (the tool's imports, seen in its memory map): one line, exit 130."""
    process = subprocess.Popen(
        [PROGRAM, "--rate", "10", "--duration", "5", "http://127.0.0.1:9/"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    maps = Path(f"/proc/{process.pid}/maps")
    try:
        wait_until(lambda: process.poll() is not None or "numpy" in maps.read_text())
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("benchsite-paced: interrupted"), err


@contextmanager
def gaps_on(cpu: int) -> Iterator[subprocess.Popen[str]]:
    """A process pinned to `cpu` at ordinary priority reading the clock in a loop until stopped: its longest
    gap between two readings is the longest time something else held that CPU from it."""
    process = subprocess.Popen(
        [sys.executable, str(GAPS), str(cpu)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "measuring"
    try:
        yield process
    finally:
        process.send_signal(signal.SIGTERM)


def longest_gap_ms(process: subprocess.Popen[str]) -> float:
    out, _ = process.communicate(timeout=30)
    return float(out.split()[-1])


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs a CPU for the witness and one for the tool")
def test_the_witness_start_freezes_no_one_on_the_servers_cpu() -> None:
    """At real-time priority from its first instruction, its start (interpreter and imports) held the server's
    CPU for 0.3-0.5 s before each load. Started at ordinary priority, whatever else runs there shares the CPU
    with it: no gap near that, on a quiet machine or a busy one (a share of a busy CPU is tens of ms)."""
    cpu, other = sorted(os.sched_getaffinity(0))[:2]
    with serving(OK) as server:
        with gaps_on(cpu) as detector:
            argv = ["taskset", "-c", str(other), PROGRAM, "--rate", "20", "--duration", "1"]
            argv += ["--witness", "5", "--witness-cpu", str(cpu), server.url]
            result = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        gap_ms = longest_gap_ms(detector)
    report = parse_paced_output(result.stdout)
    assert result.returncode == 0 and report.witness is not None, result.stderr
    assert gap_ms < 150, f"the server's CPU was held from others for {gap_ms:.0f} ms"
