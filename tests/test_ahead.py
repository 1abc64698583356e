"""The background set-up of `ahead`: only what the selected tests need, longest first, errors raised where a
fixture takes the result, nothing left running or made for nobody."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import pytest

import tasks  # noqa: F401  (at collection, as test_cli_help does: it installs the command line's signal handlers)
from ahead import Ahead, Job


def test_a_ctrl_c_in_the_session_is_pytests_to_handle_not_the_command_lines() -> None:
    """The command line's handler would end the session at once (exit 130), leaving the background set-up's
    lab and processes behind; pytest's raises KeyboardInterrupt, and the session tears everything down."""
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert all(signal.getsignal(s) == signal.SIG_DFL for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT))


def recorder(order: list[str], name: str) -> Job:
    def make() -> str:
        order.append(name)
        return name.upper()

    return Job(f"{name}_fixture", make, seconds=len(name))


def test_only_the_jobs_of_fixtures_in_use_start_and_the_longest_first() -> None:
    ahead, order = Ahead(threads=1), []
    for name in ("first", "mid", "longest", "unused"):
        ahead.add(name, recorder(order, name))
    assert ahead.start({"mid_fixture", "longest_fixture", "first_fixture"}) == ["longest", "first", "mid"]
    deadline = time.monotonic() + 5
    while len(order) < 3 and time.monotonic() < deadline:  # the thread makes them one by one, in that order
        time.sleep(0.01)
    assert order == ["longest", "first", "mid"] and ahead.take("mid") == "MID"
    ahead.close()


def test_two_jobs_are_made_at_once() -> None:
    ahead, both_began = Ahead(), threading.Barrier(2, timeout=5)  # each waits for the other to begin
    for name in ("one", "two"):
        ahead.add(name, Job(f"{name}_fixture", both_began.wait, seconds=1))
    ahead.start({"one_fixture", "two_fixture"})
    # With one thread, "one" would wait for "two" still queued behind it, and the barrier break after 5 s.
    assert {ahead.take("one"), ahead.take("two")} == {0, 1}
    ahead.close()


def test_a_job_never_started_is_made_when_its_fixture_takes_it() -> None:
    ahead, order = Ahead(), []
    ahead.add("alone", recorder(order, "alone"))
    assert ahead.start(set()) == []
    assert ahead.take("alone") == "ALONE" and order == ["alone"]


def test_finish_makes_the_queued_jobs_itself_beside_the_thread() -> None:
    ahead, gate, threads = Ahead(threads=1), threading.Event(), {}

    def held() -> None:
        threads["held"] = threading.current_thread().name
        gate.wait(5)

    def queued() -> None:
        threads["queued"] = threading.current_thread().name
        gate.set()  # would deadlock if it waited for the thread that `held` keeps

    ahead.add("held", Job("held_fixture", held, seconds=2))
    ahead.add("queued", Job("queued_fixture", queued, seconds=1))
    ahead.start({"held_fixture", "queued_fixture"})
    ahead.finish()
    assert threads["held"].startswith("ahead") and threads["queued"] == threading.current_thread().name
    ahead.close()


def test_a_jobs_error_is_raised_where_its_result_is_taken() -> None:
    ahead = Ahead()

    def broken() -> None:
        raise RuntimeError("the docs build failed")

    ahead.add("broken", Job("broken_fixture", broken, seconds=1))
    ahead.start({"broken_fixture"})
    ahead.finish()  # waits, and keeps the error for the fixture
    with pytest.raises(RuntimeError, match="the docs build failed"):
        ahead.take("broken")
    ahead.close()


def test_what_no_fixture_took_is_undone_at_the_end_and_what_one_took_is_left_to_it() -> None:
    ahead, undone = Ahead(), []
    for name in ("taken", "left"):
        ahead.add(name, Job(f"{name}_fixture", lambda name=name: name, seconds=1, close=undone.append))
    ahead.start({"taken_fixture", "left_fixture"})
    assert ahead.take("taken") == "taken"
    ahead.finish()
    ahead.close()
    assert undone == ["left"]


def test_a_job_still_queued_at_the_end_is_dropped_not_made() -> None:
    ahead, gate, made = Ahead(threads=1), threading.Event(), []
    ahead.add("running", Job("running_fixture", lambda: gate.wait(5), seconds=2))
    ahead.add("queued", Job("queued_fixture", lambda: made.append("queued"), seconds=1, close=made.append))
    ahead.start({"running_fixture", "queued_fixture"})
    closing = threading.Thread(target=ahead.close)
    closing.start()
    deadline = time.monotonic() + 5
    while not ahead.dropped("queued"):  # close drops the queued job first, then waits for the running one
        assert time.monotonic() < deadline
        time.sleep(0.01)
    gate.set()
    closing.join(timeout=5)
    assert made == [] and not closing.is_alive()


def test_a_jobs_processes_start_while_a_test_changes_the_environment() -> None:
    """Before the jobs' processes got a copy of the environment, 40 of 300 starts here failed with "[Errno 14]
    Bad address" while another thread set variables (Python 3.11.7; CI met it once, starting mypy)."""
    ahead = Ahead(threads=4)
    for number in range(4):
        ahead.add(f"starts {number}", Job("starter", lambda: [start_true() for _ in range(75)], seconds=1))
    changing = threading.Event()

    def change_the_environment() -> None:
        count = 0
        while not changing.is_set():
            os.environ[f"BENCHSITE_TEST_CHURN_{count % 20}"] = "x" * (count % 300)
            os.environ.pop(f"BENCHSITE_TEST_CHURN_{count * 7 % 20}", None)
            count += 1

    changer = threading.Thread(target=change_the_environment)
    changer.start()
    try:
        ahead.start({"starter"})
        ahead.finish()
        errors = [ahead.take(f"starts {number}") for number in range(4)]  # raises a start's OSError
    finally:
        changing.set()
        changer.join()
        ahead.close()
        for number in range(20):
            os.environ.pop(f"BENCHSITE_TEST_CHURN_{number}", None)
    assert errors == [[0] * 75] * 4


def start_true() -> int:
    return subprocess.run(["true"], check=True).returncode
