"""A figure is limited by the load tool when the run's own CPU records say so, not by a share of the ceiling."""

from __future__ import annotations

from benchsite.model.run import RunDocument
from benchsite.results.claims import State, decide
from benchsite.results.metrics import METRICS
from benchsite.results.published import load_published
from benchsite.results.store import load_run
from benchsite.results.view import RunView
from committed import COMMITTED_DATA

# An AMD run where WsgiBoostServer's ab figure stood at 62 % of ab's ceiling with its own core 97 % busy.
RUN = COMMITTED_DATA / "wsgi-servers" / "20261123T020452.765734Z-full"
CELL = ("wsgiboost", "c10")


def with_cpu(run: RunDocument, load_share: float | None = None, server_share: float | None = None) -> RunDocument:
    """The run with WsgiBoost's c10 repetitions given these CPU shares of their wall time (constructed)."""
    subjects = []
    for subject in run.subjects:
        cells = []
        for cell in subject.cells:
            if (subject.name, cell.name) == CELL:
                reps = tuple(
                    rep.model_copy(
                        update={
                            "load_cpu_s": rep.wall_s * load_share / 100 if load_share else rep.load_cpu_s,
                            "server_cpu_s": rep.wall_s * server_share / 100 if server_share else rep.server_cpu_s,
                        }
                    )
                    for rep in cell.repetitions
                )
                cell = cell.model_copy(update={"repetitions": reps})
            cells.append(cell)
        subjects.append(subject.model_copy(update={"cells": tuple(cells)}))
    return run.model_copy(update={"subjects": tuple(subjects)})


def test_a_server_whose_cpu_was_the_busy_one_is_its_own_limit_near_the_ceiling() -> None:
    view = RunView(load_run(RUN))
    found = view.figure(*CELL)
    assert found is not None and found.summary.median() > 0.5 * (view.ceiling_rps("c10") or 0)  # the old flag's case
    assert found.summary.median(METRICS["server-share"]) > 90 and found.summary.median(METRICS["load-share"]) < 90
    assert found.usable and not found.tool_limited


def test_a_saturated_load_tool_limits_the_figure_wherever_it_stands() -> None:
    found = RunView(with_cpu(load_run(RUN), load_share=95.0)).figure(*CELL)
    assert found is not None and found.tool_limited and found.tool_limited_only
    assert found.flags == ("limited by the load tool: its CPU was 95% busy",)


def test_near_the_ceiling_with_an_idle_server_the_tool_is_the_limit() -> None:
    view = RunView(with_cpu(load_run(RUN), server_share=50.0))
    found = view.figure(*CELL)
    assert found is not None and found.tool_limited
    share = 100 * found.summary.median() / (view.ceiling_rps("c10") or 1)
    assert found.flags == (
        f"limited by the load tool: at {share:.0f}% of its ceiling while the server's CPU was only 50.0% busy",
    )


def test_a_claim_on_a_tool_limited_figure_says_so_rather_than_could_not_run() -> None:
    published = load_published(RUN.parent / "published.toml")
    claim = next(c for c in published.claims if c.id == "wsgiboost-twice-waitress")
    limited = decide(claim, RunView(with_cpu(load_run(RUN), load_share=95.0)), published)
    assert limited.state == State.TOOL_LIMITED and "limited by the load tool" in limited.today
    decided = decide(claim, RunView(load_run(RUN)), published)
    assert decided.state in (State.HOLDS, State.DOES_NOT_HOLD, State.INCONCLUSIVE)
