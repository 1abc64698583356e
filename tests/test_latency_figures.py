"""The latency profile and memory of a committed run, summarised: every figure is its raw outputs' own."""

from __future__ import annotations

import re
import statistics

import pytest

from benchsite.results.latency import SHOWN, latency_figures
from benchsite.results.memory import memory_figures
from benchsite.results.store import RUN_FILE, load_run
from committed import COMMITTED_DATA

RUN = COMMITTED_DATA / "cherrypy-speed" / "20261127T123846.855229Z-full"


def printed_percentile(raw: str, percentile: float) -> int:
    found = re.search(rf"^percentile us: {percentile:g} (\d+)$", raw, re.M)
    assert found is not None
    return int(found.group(1))


def test_each_percentile_is_the_median_of_what_the_raw_outputs_print() -> None:
    run = load_run(RUN)
    figures = latency_figures(run)
    assert [figure.subject for figure in figures] == ["framework", "raw-wsgi"]
    assert run.latency is not None
    for figure, stored in zip(figures, run.latency.subjects, strict=True):
        for load, stored_load in zip(figure.loads, stored.loads, strict=True):
            reps = [rep for rep in stored_load.cell.repetitions if rep.counted]
            assert load.counted == len(reps) == 3 and not load.tool_limited
            for percentile in SHOWN:
                printed = [printed_percentile(run.raw_text(rep), percentile) / 1000 for rep in reps]
                assert load.p(percentile) == pytest.approx(statistics.median(printed))


def test_offered_loads_are_the_planned_shares_of_the_capacity_measured_in_the_run() -> None:
    run = load_run(RUN)
    assert run.latency is not None and run.profile.latency is not None
    for stored in run.latency.subjects:
        subject = run.subject(stored.subject)
        capacity = statistics.median(
            rep.result.requests_per_s
            for rep in subject.cell("c10").repetitions
            if rep.counted and rep.result  # type: ignore[union-attr]
        )
        assert stored.capacity_rps == pytest.approx(capacity, abs=1e-3)
        assert [load.fraction for load in stored.loads] == list(run.profile.latency.fractions)
        for load in stored.loads:
            assert load.cell.rate == pytest.approx(load.fraction * capacity, abs=1e-3)


def test_a_sustained_load_is_one_whose_p99_stays_under_the_target_with_every_lower_one() -> None:
    for figure in latency_figures(load_run(RUN)):
        best = figure.sustainable
        under = [load for load in figure.loads if (load.p(99.0) or 1e9) < figure.target_ms]
        if best is None:
            assert figure.loads[0] not in under
        else:
            assert figure.loads[: figure.loads.index(best) + 1] == tuple(under[: figure.loads.index(best) + 1])


def test_memory_is_the_runs_own_readings() -> None:
    run = load_run(RUN)
    for figure in memory_figures(run):
        subject = run.subject(figure.subject)
        assert subject is not None and figure.idle == subject.idle_memory
        readings = [rep.server_memory for cell in subject.cells for rep in cell.repetitions if rep.counted]
        assert run.latency is not None
        profile = run.latency.of(figure.subject)
        assert profile is not None
        readings += [rep.server_memory for load in profile.loads for rep in load.cell.repetitions if rep.counted]
        assert figure.peak is not None
        every = [reading for reading in (subject.idle_memory, *readings) if reading is not None]
        assert figure.peak.uss_bytes == max(reading.uss_bytes for reading in every)
        assert figure.peak.pss_bytes == max(reading.pss_bytes for reading in every)
        assert figure.per_connection_kib is None  # no cell of this recipe holds 100 connections


def test_no_committed_runs_peak_is_below_its_idle_reading() -> None:
    """The peak is the highest of every reading, the idle one included: Waitress's PSS once read 9.7 MiB idle
    and 8.4 MiB "at its peak" under load."""
    checked = 0
    for path in sorted(COMMITTED_DATA.glob(f"*/*/{RUN_FILE}")):
        for figure in memory_figures(load_run(path.parent)):
            if figure.idle is None or figure.peak is None:
                continue
            checked += 1
            assert figure.peak.uss_bytes >= figure.idle.uss_bytes and figure.peak.pss_bytes >= figure.idle.pss_bytes
            assert figure.peak_cell is not None
    assert checked >= 30
