"""A sweep section opens with what happened, generated from its run: the stall of cheroot 8.1-8.3 told as one
story with its upstream report, the oldest release against the newest in time and work, the other steps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docutils import nodes

from benchsite.errors import BenchError
from benchsite.model.run import RunDocument
from benchsite.results.releases import releases_of, step_changes
from benchsite.results.store import list_runs, load_run
from benchsite.results.sweep_story import Story, Sweep, story, upstream_reports
from benchsite.results.view import RunView
from benchsite.sphinxext.releases import told as releases_told
from committed import COMMITTED_DATA

RECIPE_DATA = COMMITTED_DATA / "cherrypy-speed"
CELLS = {"sweep": ["c1", "c10"], "cheroot-sweep": ["c1", "c10", "c1-k", "c10-k"]}


FIXED = {"sweep": "20261126T192326.671441Z-sweep", "cheroot-sweep": "20261126T175644.478812Z-cheroot-sweep"}
SEQUENTIAL_CHEROOT = "20261127T143946.572412Z-cheroot-sweep"  # bounded repetitions, sequential stopping


def committed_sweep(profile: str) -> RunDocument:
    """The fixed-design sweep run of each profile, pinned by its id (the page shows the newest)."""
    assert RECIPE_DATA / FIXED[profile] in list_runs(RECIPE_DATA, profile)
    return load_run(RECIPE_DATA / FIXED[profile])


def told(run: RunDocument, profile: str) -> Story:
    view = RunView(run)
    assert run.variants is not None and run.variants.package
    sweep = Sweep(view, releases_of(run, None), list(run.variants.subjects), CELLS[profile], run.variants.package)
    return story(sweep, upstream_reports(RECIPE_DATA))


def scaled(run: RunDocument, copies: set[str], cells: set[str], by: float) -> RunDocument:
    """The run with these copies' req/s in these cells multiplied, repetition by repetition (a frozen input)."""
    subjects = []
    for subject in run.subjects:
        cells_now = []
        for cell in subject.cells:
            if subject.name in copies and cell.name in cells:
                reps = tuple(
                    rep.model_copy(
                        update={
                            "result": rep.result.model_copy(update={"requests_per_s": rep.result.requests_per_s * by})
                        }
                    )
                    if rep.result is not None
                    else rep
                    for rep in cell.repetitions
                )
                cell = cell.model_copy(update={"repetitions": reps})
            cells_now.append(cell)
        subjects.append(subject.model_copy(update={"cells": tuple(cells_now)}))
    return run.model_copy(update={"subjects": tuple(subjects)})


def test_the_cheroot_sweep_opens_with_the_keepalive_stall_its_size_and_its_report() -> None:
    run = committed_sweep("cheroot-sweep")
    assert run.run_id == "20261126T175644.478812Z-cheroot-sweep"
    first = told(run, "cheroot-sweep").sentences[0]
    assert first.startswith("From 8.1.0 to 8.3.1, the cheroot raw WSGI server stalls on kept-alive connections")
    view, releases = RunView(run), releases_of(run, None)
    [into] = [s for s in step_changes(view, releases, ["raw-wsgi"], ["c1-k"]) if s.release == "8.1.0"]
    assert f"8.1.0 is {1 / into.ratio.value:,.0f}× slower than 8.0.0 at -c 1 -k" in first
    assert "(99.9 %: " in first  # its interval is one of a set held together, and says its own level
    assert "8.4.8 ends it: against 8.0.0, the last release before it" in first  # one reference for the story
    assert "https://github.com/cherrypy/cheroot/issues/305" in first


def test_the_story_follows_the_figures_of_the_run() -> None:
    """8.4.8 made as slow on kept-alive connections: the stall now runs to 8.4.8 and 8.5.2 ends it."""
    run = committed_sweep("cheroot-sweep")
    slower = scaled(run, {"raw-wsgi-8_4_8"}, {"c1-k", "c10-k"}, 1 / 600)
    first = told(slower, "cheroot-sweep").sentences[0]
    assert (
        first.startswith("From 8.1.0 to 8.4.8, the cheroot raw WSGI server stalls")
        and "8.5.2 ends it: against 8.0.0" in first
    )


def test_the_cherrypy_sweep_names_its_oldest_release_against_the_newest_in_time_and_work() -> None:
    run = committed_sweep("sweep")
    sentences = told(run, "sweep").sentences
    ends = next(s for s in sentences if s.startswith("3.2.4 against 18.10.0"))
    assert "the CherryPy framework of 3.2.4 is 1.25× faster than 18.10.0's at -c 1 (99.9 %: " in ends
    assert "though faster in 5 of 5 rounds at -c 10" in ends  # what the held-together interval cannot settle
    assert "18.10.0's executes 26 % more instructions per request" in ends
    faster = scaled(run, {"framework-3_2_4"}, {"c1"}, 2.0)
    again = next(s for s in told(faster, "sweep").sentences if s.startswith("3.2.4 against"))
    assert "the CherryPy framework of 3.2.4 is 2.5" in again  # twice as fast as before


def test_a_broken_upstream_file_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "upstream.toml").write_text('[[reports]]\npackage = "cheroot"\n')
    with pytest.raises(BenchError, match=r"upstream.toml: reports\[0\]\.first is missing"):
        upstream_reports(tmp_path)


def test_an_upstream_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.toml").write_text("")
    (tmp_path / "upstream.toml").symlink_to(tmp_path / "elsewhere.toml")
    with pytest.raises(BenchError, match="a link, which is never followed"):
        upstream_reports(tmp_path)


def test_the_sequential_sweep_tells_the_fixed_sweeps_findings() -> None:
    """The cheroot sweep made again with repetitions bounded at 2 s and sequential stopping: the same stall (the
    same releases and cells, 8.4.8 ending it), the same oldest-against-newest sentence, no other step in time, and the
    same four steps in work first in its list."""
    fixed = told(committed_sweep("cheroot-sweep"), "cheroot-sweep").sentences
    sequential_run = load_run(RECIPE_DATA / SEQUENTIAL_CHEROOT)
    assert sequential_run.profile.sequential and sequential_run.profile.seconds == 2
    sequential = told(sequential_run, "cheroot-sweep").sentences
    opening = "From 8.1.0 to 8.3.1, the cheroot raw WSGI server stalls on kept-alive connections (-c 1 -k, -c 10 -k)"
    assert fixed[0].startswith(opening) and sequential[0].startswith(opening)
    assert "8.4.8 ends it" in sequential[0] and "issues/305" in sequential[0]
    rounds_said = re.compile(r" \(though [^()]*\)")  # what each run's own rounds did where the interval is open
    assert [rounds_said.sub("", each) for each in sequential[1:3]] == [rounds_said.sub("", each) for each in fixed[1:3]]
    assert sequential[3].startswith(fixed[3].removesuffix("."))


def test_an_upstream_file_too_large_to_be_a_list_of_reports_is_refused_unread(tmp_path: Path) -> None:
    with (tmp_path / "upstream.toml").open("wb") as handle:
        handle.truncate(400 * 1024 * 1024)  # 400 MB, nearly all of it a hole: never read
    with pytest.raises(BenchError, match=r"upstream.toml: 419,430,400 bytes, over the 1,048,576"):
        upstream_reports(tmp_path)


def test_only_a_reports_own_addresses_become_links(tmp_path: Path) -> None:
    """An address in a report's title stays text: links come from its `report` and `fix` fields alone."""
    (tmp_path / "upstream.toml").write_text(
        (RECIPE_DATA / "upstream.toml")
        .read_text()
        .replace('title = "[cheroot', 'title = "see https://evil.example/x for [cheroot')
    )
    found = story(
        Sweep(
            RunView(committed_sweep("cheroot-sweep")),
            releases_of(committed_sweep("cheroot-sweep"), None),
            ["raw-wsgi"],
            CELLS["cheroot-sweep"],
            "cheroot",
        ),
        upstream_reports(tmp_path),
    )
    assert "https://evil.example/x" in found.sentences[0]
    listing = releases_told(found, "cherrypy-speed", "20261126T175644.478812Z-cheroot-sweep")
    links = [node["refuri"] for node in listing.findall(nodes.reference)]
    assert links == ["https://github.com/cherrypy/cheroot/issues/305", "https://github.com/cherrypy/cheroot/pull/308"]
