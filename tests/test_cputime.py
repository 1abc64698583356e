"""Server CPU to the nanosecond: schedstat counts, with the clock ticks where a thread's time was lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchsite.harness.processes.cputime import CpuReading, cpu_between, task_runtimes, tree_reading


def fake_proc(root: Path, tasks: dict[int, dict[int, int]]) -> Path:
    """A /proc with the given {pid: {tid: ns on a CPU}}, in schedstat's format (ns, wait ns, slices)."""
    for pid, threads in tasks.items():
        for tid, ns in threads.items():
            task = root / str(pid) / "task" / str(tid)
            task.mkdir(parents=True)
            (task / "schedstat").write_text(f"{ns} 5000 12\n")
    return root


def test_every_live_task_is_read_in_nanoseconds(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, {100: {100: 1_000_000_123, 101: 7}, 200: {200: 42}})
    assert task_runtimes([100, 200, 300], proc) == {"100/100": 1_000_000_123, "100/101": 7, "200/200": 42}


def test_a_repetition_gets_sub_microsecond_cpu_per_request_from_schedstat() -> None:
    before = CpuReading(1.00, {"1/1": 1_000_000_000, "1/2": 500_000_000})
    after = CpuReading(1.12, {"1/1": 1_081_234_567, "1/2": 538_765_433, "1/3": 1_500})  # a thread was born
    seconds, clock = cpu_between(before, after)
    assert clock == "schedstat" and seconds == pytest.approx(0.1200015, abs=1e-12)
    per_request_us = seconds * 1e6 / 1000  # over 1,000 requests: 120.0015 µs, not 120 or 130
    assert per_request_us == pytest.approx(120.0015, abs=1e-6)


def test_a_thread_that_exited_sends_the_repetition_to_the_clock_ticks() -> None:
    before = CpuReading(1.00, {"1/1": 1_000_000_000, "1/2": 500_000_000})
    after = CpuReading(1.30, {"1/1": 1_100_000_000})
    assert cpu_between(before, after) == pytest.approx((0.30, "ticks"))


def test_threads_born_and_gone_between_readings_show_in_the_ticks_and_win() -> None:
    before = CpuReading(1.00, {"1/1": 1_000_000_000})
    after = CpuReading(2.00, {"1/1": 1_100_000_000})  # the ticks saw 1 s, the live thread 0.1 s
    assert cpu_between(before, after) == pytest.approx((1.0, "ticks"))
    within = CpuReading(1.115, {"1/1": 1_100_000_000})  # within the ticks' resolution: nanoseconds
    assert cpu_between(before, within) == pytest.approx((0.1, "schedstat"))


def test_a_real_process_trees_cpu_is_read_to_the_nanosecond() -> None:
    """A tree of our own (a parent and a child that burns 0.3 s on a word from us), never pytest's:
    pytest's own background set-up starts and ends processes, whose time only the ticks keep."""
    burn = "import time\ninput()\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\ninput()"
    spawn = f"import subprocess, sys\nsys.exit(subprocess.run([sys.executable, '-c', {burn!r}]).returncode)"
    parent = subprocess.Popen([sys.executable, "-c", spawn], stdin=subprocess.PIPE)
    assert parent.stdin is not None
    try:
        before = tree_reading(parent.pid)
        while before.processes < 2:  # until the child is there
            before = tree_reading(parent.pid)
        parent.stdin.write(b"\n")
        parent.stdin.flush()
        after = tree_reading(parent.pid)
        while after.ticks_s - before.ticks_s < 0.3:
            after = tree_reading(parent.pid)
        seconds, clock = cpu_between(before, after)
        assert clock == "schedstat" and seconds > 0.2
        assert seconds == pytest.approx(after.ticks_s - before.ticks_s, abs=0.05)
        assert seconds != round(seconds, 2)  # not a multiple of a tick
    finally:
        parent.communicate(b"\n", timeout=10)
