"""Interference bounds a figure, it does not erase it: others' work only slows what it hits, so the rounds in which
A met more of it than B can still call "B slower" (and the mirror), never the other way. Frozen rounds: a committed
A/A run of the raw WSGI server (twelve rounds), its B copy's req/s scaled and interference set round by round."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from benchsite.model.run import RunDocument
from benchsite.results.change_words import change_said
from benchsite.results.claims import State
from benchsite.results.claims import decide as decide_on_view
from benchsite.results.comparing import paired_cells
from benchsite.results.machines import by_machine, picked_by
from benchsite.results.published import load_published, parse_claim
from benchsite.results.ranking import ranked, ranking_said
from benchsite.results.store import load_run
from benchsite.results.view import RunView
from committed import COMMITTED_DATA

AA_RUN = COMMITTED_DATA / "experiments" / "versus" / "cherrypy-speed" / "20261126T172653.987849Z-versus"


def hit(rep: Any, share: float) -> Any:
    """The repetition as if others had taken `share` of its wall time on the measured CPUs (disturbed)."""
    return rep.model_copy(update={"other_busy_s": share * rep.wall_s, "steal_s": 0.0, "disturbed": share > 0.1})


def edited(scale_b: float, hit_a: float, hit_b: float, cell: str = "c1") -> RunDocument:
    """The A/A run with B's req/s in `cell` scaled and each side's repetitions there hit as given, every round."""
    run = load_run(AA_RUN)
    subjects = []
    for subject in run.subjects:
        cells = []
        for each in subject.cells:
            if each.name == cell:
                is_b = subject.name.endswith("-b")
                reps = []
                for rep in each.repetitions:
                    assert rep.result is not None
                    result = rep.result.model_copy(
                        update={"requests_per_s": rep.result.requests_per_s * (scale_b if is_b else 1.0)}
                    )
                    reps.append(hit(rep.model_copy(update={"result": result}), hit_b if is_b else hit_a))
                each = each.model_copy(update={"repetitions": tuple(reps)})
            cells.append(each)
        subjects.append(subject.model_copy(update={"cells": tuple(cells)}))
    return run.model_copy(update={"subjects": tuple(subjects)})


def c1(run: RunDocument) -> Any:
    [cell] = [cell for cell in paired_cells(RunView(run)) if cell.cell == "c1"]
    return cell


def test_the_unedited_aa_run_calls_nothing() -> None:
    assert not any(cell.time_changed for cell in paired_cells(RunView(load_run(AA_RUN))))


def test_a_thousandfold_slowdown_is_called_though_every_pair_met_unlike_interference() -> None:
    """A hit in every round, B quiet: no pair is alike (the rule before called nothing), but a slowed A can only
    make B look faster, so B 1000× slower is surely slower."""
    cell = c1(edited(scale_b=0.001, hit_a=0.5, hit_b=0.0))
    assert cell.time_changed and cell.time_bound == "at most" and cell.time is not None
    assert cell.time.high is not None and cell.time.high < 0.01
    said = change_said(cell.time, cell.time_changed, cell.time_margin, bound=cell.time_bound)
    assert said.endswith("changed") and "× slower or beyond" in said and "can make B look faster, never slower" in said


@pytest.mark.parametrize("scale_b", [0.5, 0.6, 1.0])
def test_rounds_in_which_b_met_more_interference_never_call_b_slower_by_it(scale_b: float) -> None:
    """B hit in every round (others took half its wall time), A quiet: a slowdown that interference of that share
    can explain (B at half A's rate or more) is never called."""
    cell = c1(edited(scale_b=scale_b, hit_a=0.0, hit_b=0.5))
    assert not cell.time_changed


def test_a_slowdown_too_large_for_the_interference_b_met_is_called() -> None:
    """B hit in every round as above, but 1000× slower: others who took half of B's time could have halved its
    rate, not cut it a thousandfold, so B is surely slower (bounded: at most half of the measured slowdown)."""
    cell = c1(edited(scale_b=0.001, hit_a=0.0, hit_b=0.5))
    assert cell.time_changed and cell.time_bound == "at most" and cell.time is not None
    assert cell.time.high is not None and cell.time.high < 0.01


def test_rounds_in_which_b_met_more_interference_can_still_call_b_faster() -> None:
    cell = c1(edited(scale_b=3.0, hit_a=0.0, hit_b=0.5))
    assert cell.time_changed and cell.time_bound == "at least"


def test_alike_interference_decides_both_ways_as_before() -> None:
    """Both sides hit as hard: every pair alike, the two-sided test, no bound named."""
    slower, same = c1(edited(scale_b=0.5, hit_a=0.5, hit_b=0.5)), c1(edited(scale_b=1.0, hit_a=0.5, hit_b=0.5))
    assert slower.time_changed and slower.time_bound == "" and not same.time_changed


def test_replaying_every_committed_aa_run_calls_no_more_than_the_stated_level() -> None:
    """Every A/A run the calibration page counts (the power benchmarks' A/A sets), under this rule: the rounds
    leaning one way call nothing there, and time calls at most 5 % of the cells (the 95 % level)."""
    cells = called = by_bound = 0
    for record in sorted((COMMITTED_DATA / "method").glob("power*.toml")):
        for found in tomllib.loads(record.read_text())["sets"]:
            if not found["label"].startswith("A/A"):
                continue
            for run in found["runs"]:
                view = RunView(load_run(COMMITTED_DATA / found["data_dir"] / found["recipe"] / run))
                for cell in paired_cells(view):
                    cells, called = cells + 1, called + cell.time_changed
                    by_bound += bool(cell.time_bound)
    assert cells >= 40 and by_bound == 0 and called <= 0.05 * cells, (cells, called, by_bound)


def all_disturbed(run: RunDocument, cell: str) -> RunDocument:
    """The run with every repetition of `cell` disturbed, on every subject (a busy machine throughout)."""
    subjects = []
    for subject in run.subjects:
        cells = tuple(
            each.model_copy(update={"repetitions": tuple(hit(rep, 0.5) for rep in each.repetitions)})
            if each.name == cell
            else each
            for each in subject.cells
        )
        subjects.append(subject.model_copy(update={"cells": cells}))
    return run.model_copy(update={"subjects": tuple(subjects)})


def test_a_busy_cell_shows_every_server_that_answered_as_a_lower_bound_and_decides_nothing() -> None:
    """A new page's quick run beside a hog: every repetition disturbed. The servers answered: the ranking shows
    each one's figure as what the server does at least, labelled, never "no server answered"; a claim on those
    figures has not enough evidence, with the reason, instead of "could not run"."""
    run = all_disturbed(load_run(COMMITTED_DATA / "wsgi-servers" / "20261127T124512.283658Z-full"), "c10")
    view = RunView(run)
    said = ranking_said(view, "c10")
    assert said != "no server answered" and "at least" in said and ", busy" in said
    places = ranked(view, "c10")
    assert places and all(place.busy for place in places)
    servers = [s.name for s in run.measured if s.role == "server" and s.cell("c10")]
    figure = view.figure(servers[0], "c10")
    assert figure is not None and not figure.usable and "a busy machine" in figure.flags[-1]
    claim = parse_claim({"id": "f", "text": "t", "kind": "fastest", "subject": servers[0], "cells": ["c10"]}, "test")
    published = load_published(COMMITTED_DATA / "wsgi-servers" / "published.toml")
    verdict = decide_on_view(claim, view, published)
    assert verdict.state == State.TOO_LITTLE and "every repetition disturbed" in verdict.today


def half_disturbed(run: RunDocument, run_id: str) -> RunDocument:
    """The run, renamed, with every other repetition of every cell disturbed: a busy machine's run whose cells
    each kept undisturbed repetitions."""
    subjects = []
    for subject in run.subjects:
        cells = tuple(
            each.model_copy(
                update={"repetitions": tuple(hit(rep, 0.5) if rep.index % 2 else rep for rep in each.repetitions)}
            )
            for each in subject.cells
        )
        subjects.append(subject.model_copy(update={"cells": cells}))
    return run.model_copy(update={"subjects": tuple(subjects), "run_id": run_id})


def test_a_busy_run_is_only_listed_where_its_machine_has_quiet_runs_and_read_where_it_has_none() -> None:
    """A re-run on a busy machine that has quiet runs is listed, labelled, in the history, and neither read by the
    page nor pooled into its verdicts; a machine with busy runs alone (a laptop) is read from them."""
    quiet = load_run(COMMITTED_DATA / "cherrypy-speed" / "20261127T123846.855229Z-full")
    busy = RunView(half_disturbed(quiet, "20261128T000000.000000Z-full"))
    assert busy.busy and busy.usable_count == RunView(quiet).usable_count
    assert (
        "measured on a busy machine" in busy.interference_said()
        and "above its limit of 25 %" in busy.interference_said()
    )
    [machine] = by_machine([RunView(quiet), busy])
    assert [view.run.run_id for view in machine.every_run] == [quiet.run_id, busy.run.run_id]
    assert [view.run.run_id for view in machine.views] == [quiet.run_id]
    assert machine.busy == (busy,) and not machine.only_busy
    assert machine.main.run.run_id == quiet.run_id and picked_by(machine.views) == ""
    [alone] = by_machine([busy])
    assert alone.only_busy and alone.main is busy  # a machine with only a busy run shows it


def test_accept_busy_counts_the_disturbed_repetitions_and_labels_the_cell() -> None:
    """--accept-busy records the choice; the run's every cell then has a figure, its disturbed repetitions
    counted (and said to be), where without it the cell is a lower bound that decides nothing."""
    run = all_disturbed(load_run(COMMITTED_DATA / "wsgi-servers" / "20261127T124512.283658Z-full"), "c10")
    server = next(s.name for s in run.measured if s.role == "server" and s.cell("c10"))
    refused, accepted = RunView(run), RunView(run.model_copy(update={"accepted_busy": True}))
    assert refused.figure(server, "c10") is not None and not refused.usable(server, "c10")
    figure = accepted.figure(server, "c10")
    assert figure is not None and figure.usable and not accepted.busy
    summary = figure.summary
    cell = run.subject(server).cell("c10")  # type: ignore[union-attr]
    assert summary.disturbed_counted == summary.repetitions_ok == len([rep for rep in cell.repetitions if rep.ok])
    assert summary.median() == refused.summaries[(server, "c10")].at_least_rps()  # the same repetitions' median
    assert "--accept-busy" in accepted.interference_said() and ranking_said(accepted, "c10") != "no server answered"
