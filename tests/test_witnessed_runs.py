"""The committed runs made with benchsite-paced 2 and its witness (wsgi-servers and bottle-adapters on the project's
VM): every server has a latency figure at half its capacity or the page says why, no load shown as the server's
departs from its witness, and the witness's figures are its raw lines'."""

from __future__ import annotations

import re
import statistics

import pytest

from benchsite.results.latency import WITNESSED, departs, fmt_ms, latency_figures, queue_said
from benchsite.results.store import load_run
from benchsite.sphinxext.latency import _plain as plain_cell
from benchsite.tools.paced import PacedResult
from committed import COMMITTED_DATA

RUNS = {
    "wsgi-servers": "20261128T042213.334499Z-full",
    "bottle-adapters": "20261128T044057.579432Z-full",
}
PATHS = [COMMITTED_DATA / recipe / run_id for recipe, run_id in RUNS.items()]


def witness_printed(raw: str, percentile: float) -> int:
    found = re.search(rf"^witness percentile us: {percentile:g} (\d+)$", raw, re.M)
    assert found is not None
    return int(found.group(1))


@pytest.mark.parametrize("path", PATHS, ids=list(RUNS))
def test_each_load_was_witnessed_and_its_figures_are_the_witness_raw_lines(path) -> None:  # type: ignore[no-untyped-def]
    run = load_run(path)
    assert run.latency is not None and run.latency.plan.witness_rps > 0
    for figure, stored in zip(latency_figures(run), run.latency.subjects, strict=True):
        for load, made in zip(figure.loads, stored.loads, strict=True):
            counted = [rep for rep in made.cell.repetitions if rep.counted]
            assert counted and all(isinstance(rep.result, PacedResult) for rep in counted)
            for percentile in WITNESSED:
                printed = [witness_printed(run.raw_text(rep), percentile) / 1000 for rep in counted]
                found = load.witness_ms[percentile]
                assert found is not None and found.value == pytest.approx(statistics.median(printed))


@pytest.mark.parametrize("path", PATHS, ids=list(RUNS))
def test_every_server_has_a_figure_at_half_its_capacity_or_the_page_says_why(path) -> None:  # type: ignore[no-untyped-def]
    for figure in latency_figures(load_run(path)):
        half = next(load for load in figure.loads if load.fraction == 0.5)
        shown = plain_cell(half, 99.0)
        if half.tool_limited:
            assert "tool behind" in shown and "witness " in shown, shown
        elif half.apart:  # both figures, and the load decides nothing
            assert shown.startswith(fmt_ms(half.p(99.0))) and "(apart: witness " in shown, shown
            assert figure.sustained(half) is None
        else:
            assert half.p(99.0) is not None and shown == plain_cell(half, 99.0).split(" (")[0], (figure.label, shown)


@pytest.mark.parametrize("path", PATHS, ids=list(RUNS))
def test_a_load_whose_tool_and_witness_depart_is_said_apart_and_decides_nothing(path) -> None:  # type: ignore[no-untyped-def]
    """Neither sender has been shown the right one where they disagree (an independent client sided with each about
    as often): the page shows both and lets neither decide."""
    shown = 0
    for figure in latency_figures(load_run(path)):
        for load in figure.loads:
            if load.tool_limited:
                continue
            shown += 1
            assert all(load.p(p) is not None for p in WITNESSED)
            departing = any(departs(load.latency_ms[p], load.witness_ms[p]) for p in WITNESSED)
            assert load.apart == departing, (figure.label, load)
            if departing:
                assert figure.sustained(load) is None and "(apart: witness " in plain_cell(load, 99.0)
    assert shown > 0


def test_a_tail_of_a_second_is_said_to_be_the_listen_queues_where_it_overflowed() -> None:
    """Cheroot's default listen queue holds 5 connections: at half its capacity the queue turned attempts away,
    and its p99.9 is the second a dropped attempt waits before it is sent again."""
    figures = latency_figures(load_run(PATHS[0]))
    said = queue_said(figures)
    cheroot = next(figure for figure in figures if figure.subject == "cheroot")
    load = next(load for load in cheroot.loads if load.listen_overflows and (load.p(99.9) or 0) >= 900)
    assert len(said) == 1 and said[0].startswith(
        "A full listen queue's second (an attempt it turns away is sent again a second later): "
        f"{cheroot.label}'s p99.9 at {round(100 * load.fraction)} %, {fmt_ms(load.p(99.9))} "
        f"({load.listen_overflows:,} turned away)"
    )
    assert all(not load.listen_overflows for figure in figures if figure.subject == "nginx" for load in figure.loads)
