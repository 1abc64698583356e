"""Where a stalled release's time goes, from the committed wall-clock run of cheroot 8.0.0 and 8.1.0."""

from __future__ import annotations

import statistics
from html import unescape
from pathlib import Path

import pytest
from pages import one

from benchsite.results.flames import WALLCLOCK_DIR, top_functions
from benchsite.results.store import load_run
from benchsite.results.waiting import newest_waiting, thread_share, waiting_in
from committed import COMMITTED_DATA

RUN = COMMITTED_DATA / "cherrypy-speed" / "20261127T135006.826989Z-cheroot-wall"


def test_each_stalled_release_is_set_against_the_last_fast_one_from_its_own_figures() -> None:
    run = load_run(RUN)
    told = waiting_in(run)
    assert [(w.release, w.before, w.cell, w.subject) for w in told] == [
        (release, "8.0.0", "c1-k", "raw-wsgi") for release in ("8.1.0", "8.2.1", "8.3.1")
    ]
    found = told[0]
    slow = run.subject("raw-wsgi-8_1_0").cell("c1-k")  # type: ignore[union-attr]
    reps = [rep for rep in slow.repetitions if rep.counted]  # type: ignore[union-attr]
    assert found.per_request_ms == statistics.median(rep.result.time_per_request_ms for rep in reps)  # type: ignore[union-attr]
    cpu_ms = statistics.median(rep.server_cpu_s * 1000 / rep.result.complete_requests for rep in reps)  # type: ignore[union-attr]
    assert found.cpu_per_request_ms == pytest.approx(cpu_ms)
    assert found.waiting == pytest.approx(1 - cpu_ms / found.per_request_ms)


def test_the_function_named_is_the_one_whose_share_grew_most() -> None:
    found = waiting_in(load_run(RUN))[0]
    stacks = {name: (RUN / WALLCLOCK_DIR / f"raw-wsgi-{name}__c1-k.txt").read_text() for name in ("8_0_0", "8_1_0")}
    shares = {name: {f.function: f.share for f in top_functions(text, 40)[1]} for name, text in stacks.items()}
    growth = {function: share - shares["8_0_0"].get(function, 0.0) for function, share in shares["8_1_0"].items()}
    assert found.function == max(growth, key=lambda function: growth[function])
    assert found.share == shares["8_1_0"][found.function]
    assert found.thread_share == thread_share(RUN / WALLCLOCK_DIR / "raw-wsgi-8_1_0__c1-k.txt", found.function)
    assert found.waiting == max(0.0, 1 - found.cpu_per_request_ms / found.per_request_ms)


def test_the_newest_wall_clock_run_of_the_package_is_the_one_read() -> None:
    told = newest_waiting(COMMITTED_DATA / "cherrypy-speed", "cheroot")
    assert told and all(found.run_id == RUN.name for found in told)
    assert newest_waiting(COMMITTED_DATA / "cherrypy-speed", "CherryPy") == []


@pytest.mark.integration
def test_the_sweep_section_says_where_the_stalled_release_waits(committed_site: Path) -> None:
    html = unescape((committed_site / "recipes" / "cherrypy-speed-releases.html").read_text())
    told = waiting_in(load_run(RUN))
    assert told
    for found in told:  # one row a stalled release, in a table after the story
        tag = {"recipe": "cherrypy-speed", "release": found.release, "cell": found.cell}
        assert one(html, waiting="share", **tag).text == f"{100 * found.waiting:.1f} %"
        assert one(html, waiting="function", **tag).text == found.function
        assert one(html, waiting="per-request", **tag).text == f"{found.per_request_ms:,.1f} ms"
