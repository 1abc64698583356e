"""Intervals and verdicts on fixed inputs: known intervals, decided claims, a straddling claim."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from benchsite.model.run import RUN_FILE, RunDocument
from benchsite.results.claims import State, Verdict
from benchsite.results.claims import decide as decide_on_view
from benchsite.results.intervals import (
    median_interval,
    paired_rounds,
    ratio_interval,
    ratio_intervals,
    unpaired_ratio_interval,
)
from benchsite.results.published import load_published, parse_claim
from benchsite.results.store import load_run, runs_shown
from benchsite.results.view import RunView
from committed import COMMITTED_DATA

COMMITTED = COMMITTED_DATA / "cherrypy-speed" / "20261123T071248.420032Z-full"  # pinned by its id
PUBLISHED = load_published(COMMITTED_DATA / "cherrypy-speed" / "published.toml")
HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, COULD_NOT_RUN = (
    State.HOLDS,
    State.DOES_NOT_HOLD,
    State.INCONCLUSIVE,
    State.COULD_NOT_RUN,
)


def decide(claim, run: RunDocument, published) -> Verdict:
    return decide_on_view(claim, RunView(run), published)


def test_the_median_of_ten_values_has_the_order_statistic_interval_of_ranks_2_and_9() -> None:
    interval = median_interval([float(v) for v in range(10, 0, -1)])
    assert interval is not None
    assert (interval.value, interval.low, interval.high, interval.level) == (5.5, 2.0, 9.0, 0.95)


def test_five_values_allow_no_95_percent_interval_so_min_max_with_its_coverage() -> None:
    interval = median_interval([3.0, 1.0, 2.0, 5.0, 4.0])
    assert interval is not None
    assert (interval.low, interval.high) == (1.0, 5.0)
    assert interval.level == pytest.approx(1 - 2 / 32)  # 93.75 %


def test_one_value_has_no_interval() -> None:
    interval = median_interval([7.0])
    assert interval is not None and interval.value == 7.0 and not interval.bounded


def test_a_ratio_interval_is_the_t_interval_of_the_log_ratios() -> None:
    ratios = [1.55, 1.49, 2.07, 2.17, 1.82]
    interval = ratio_interval(ratios)
    logs = np.log(ratios)
    half = stats.t.ppf(0.975, len(logs) - 1) * logs.std(ddof=1) / np.sqrt(len(logs))
    assert interval is not None and interval.count == 5
    assert interval.value == pytest.approx(np.exp(logs.mean()))
    assert (interval.low, interval.high) == pytest.approx((np.exp(logs.mean() - half), np.exp(logs.mean() + half)))


def test_many_ratio_intervals_at_once_equal_each_one_alone() -> None:
    lists = [[], [1.1], [1.0, 1.0, 1.0], [0.9, 1.1], [1.02, 0.97, 1.05], [1.3, 1.1, 1.2], [2.0, 1.9, 2.2, 2.1, 1.8]]
    assert ratio_intervals(lists, 0.9) == [ratio_interval(ratios, 0.9) for ratios in lists]


def test_rounds_pair_by_their_index_and_skip_rounds_one_side_lacks() -> None:
    assert paired_rounds({1: 200.0, 2: 300.0, 3: 400.0}, {1: 100.0, 3: 200.0, 4: 50.0}) == [2.0, 2.0]


def test_two_runs_compare_without_pairing() -> None:
    found = unpaired_ratio_interval([110.0, 100.0, 105.0], [100.0, 90.0, 95.0])
    assert found is not None
    interval, p_value = found
    assert interval.low is not None and interval.high is not None
    assert interval.low < interval.value < interval.high and 0 < p_value < 1


def run_with(rounds: dict[tuple[str, str], list[float]]) -> RunDocument:
    """The committed cherrypy run with each named cell's req/s replaced round by round (fixed test inputs)."""
    run = load_run(COMMITTED)
    subjects = []
    for subject in run.subjects:
        cells = []
        for cell in subject.cells:
            values = rounds.get((subject.name, cell.name))
            if values is not None:
                template = cell.repetitions[0]
                assert template.result is not None
                reps = tuple(
                    template.model_copy(
                        update={"index": index, "result": template.result.model_copy(update={"requests_per_s": value})}
                    )
                    for index, value in enumerate(values, start=1)
                )
                cell = cell.model_copy(update={"repetitions": reps})
            cells.append(cell)
        subjects.append(subject.model_copy(update={"cells": tuple(cells)}))
    return run.model_copy(update={"subjects": tuple(subjects)})


RATIO = parse_claim(
    {
        "id": "x",
        "text": "t",
        "kind": "ratio",
        "numerator": ["raw-wsgi", "c1"],
        "denominator": ["framework", "c1"],
        "at_least": 1.5,
    },
    "test",
)
FRAMEWORK = [1000.0, 1100.0, 900.0, 1050.0, 950.0]


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        ([2000.0, 2210.0, 1790.0, 2090.0, 1910.0], HOLDS),  # about 2x, steady
        ([1200.0, 1300.0, 1100.0, 1280.0, 1120.0], DOES_NOT_HOLD),  # about 1.2x, steady
        ([1500.0, 2300.0, 1200.0, 1800.0, 1400.0], INCONCLUSIVE),  # about 1.6x, the interval straddles 1.5
    ],
)
def test_a_ratio_claim_holds_fails_or_is_inconclusive_by_its_interval(raw: list[float], status: str) -> None:
    run = run_with({("framework", "c1"): FRAMEWORK, ("raw-wsgi", "c1"): raw})
    verdict = decide(RATIO, run, PUBLISHED)
    assert verdict.state == status, verdict.today
    assert verdict.needs == ((("raw-wsgi", "c1"), ("framework", "c1")) if status == INCONCLUSIVE else ())


def test_one_round_decides_no_ratio_claim() -> None:
    run = run_with({("framework", "c1"): [1000.0], ("raw-wsgi", "c1"): [3000.0]})
    assert decide(RATIO, run, PUBLISHED).state == INCONCLUSIVE


FASTEST = parse_claim({"id": "f", "text": "t", "kind": "fastest", "subject": "raw-wsgi", "cells": ["c10"]}, "test")


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        ([1500.0, 1650.0, 1350.0, 1560.0, 1440.0], HOLDS),
        ([700.0, 770.0, 630.0, 730.0, 670.0], DOES_NOT_HOLD),
        ([1000.0, 1300.0, 800.0, 1150.0, 900.0], INCONCLUSIVE),
    ],
)
def test_a_fastest_claim_needs_every_ratio_surely_above_one(raw: list[float], status: str) -> None:
    run = run_with({("framework", "c10"): FRAMEWORK, ("raw-wsgi", "c10"): raw})
    assert decide(FASTEST, run, PUBLISHED).state == status


def test_a_fastest_claim_that_names_a_few_comparisons_lists_them_all() -> None:
    cells = ("c1", "c10", "c1-k", "c10-k")
    claim = parse_claim({"id": "f", "text": "t", "kind": "fastest", "subject": "framework", "cells": cells}, "test")
    behind = [700.0, 770.0, 630.0, 730.0, 670.0]
    run = run_with({**{("framework", c): behind for c in cells}, **{("raw-wsgi", c): FRAMEWORK for c in cells}})
    verdict = decide(claim, run, PUBLISHED)
    assert verdict.state == DOES_NOT_HOLD
    assert verdict.today.endswith("and 1 more")
    assert [item.rsplit(" (", 1)[0] for item in verdict.details] == [
        f"surely behind {RunView(run).named('raw-wsgi', c)}" for c in cells
    ]
    few = decide(FASTEST, run_with({("framework", "c10"): FRAMEWORK, ("raw-wsgi", "c10"): behind}), PUBLISHED)
    assert few.state == DOES_NOT_HOLD and few.details == ()  # nothing shortened, nothing more to list


def test_a_fastest_claim_compared_with_no_competitor_is_not_enough_evidence() -> None:
    """Every competitor's figure left out (here a non-2xx reply flags the framework's -c 10): nothing was set
    against the subject, so nothing holds, whatever its own figure."""
    run = run_with({("framework", "c10"): FRAMEWORK, ("raw-wsgi", "c10"): [1500.0, 1650.0, 1350.0, 1560.0, 1440.0]})
    framework = run.subjects[0]
    cells = []
    for cell in framework.cells:
        if cell.name == "c10":
            reps = tuple(
                rep.model_copy(update={"result": rep.result.model_copy(update={"non_2xx_responses": 1})})
                for rep in cell.repetitions
                if rep.result is not None
            )
            cell = cell.model_copy(update={"repetitions": reps})
        cells.append(cell)
    flagged = run.model_copy(
        update={"subjects": (framework.model_copy(update={"cells": tuple(cells)}), *run.subjects[1:])}
    )
    verdict = decide(FASTEST, flagged, PUBLISHED)
    assert verdict.state == State.TOO_LITTLE, verdict.today
    assert verdict.today.startswith("its only comparison could not be made")
    assert "surely faster" not in verdict.reading and "is not known" in verdict.reading


def test_a_flagged_cell_decides_nothing(tmp_path: Path) -> None:
    run = load_run(COMMITTED)
    subject = run.subjects[1]
    cell = subject.cell("c1")
    assert cell is not None and cell.repetitions[0].result is not None
    failed = cell.repetitions[0].model_copy(
        update={"result": cell.repetitions[0].result.model_copy(update={"non_2xx_responses": 3})}
    )
    cells = tuple(
        c.model_copy(update={"repetitions": (failed, *c.repetitions[1:])}) if c.name == "c1" else c
        for c in subject.cells
    )
    broken = run.model_copy(update={"subjects": (run.subjects[0], subject.model_copy(update={"cells": cells}))})
    verdict = decide(RATIO, broken, PUBLISHED)
    assert verdict.state == COULD_NOT_RUN and "non-2xx" in verdict.today


def test_a_page_shows_the_latest_full_run_even_after_a_newer_quick_run(tmp_path: Path) -> None:
    for run_id in ("20260101T000000Z-full", "20260102T000000.000001Z-full", "20260103T000000.000001Z-quick"):
        (tmp_path / run_id).mkdir()
        (tmp_path / run_id / RUN_FILE).write_text("{}")
    assert runs_shown(tmp_path, "full")[-1] == tmp_path / "20260102T000000.000001Z-full"
    assert runs_shown(tmp_path, "quick") == [tmp_path / "20260103T000000.000001Z-quick"]


def test_a_recipe_with_only_a_quick_run_shows_that_run(tmp_path: Path) -> None:
    (tmp_path / "20260103T000000Z-quick").mkdir()
    (tmp_path / "20260103T000000Z-quick" / RUN_FILE).write_text("{}")
    assert runs_shown(tmp_path, "full") == [tmp_path / "20260103T000000Z-quick"]


def test_a_count_of_claims_agrees_with_its_verb() -> None:
    assert [HOLDS.counted(1), HOLDS.counted(4), DOES_NOT_HOLD.counted(1), DOES_NOT_HOLD.counted(4)] == [
        "1 holds",
        "4 hold",
        "1 does not hold",
        "4 do not hold",
    ]
    assert State.DEPENDS.counted(2) == "2 depend on the machine" and INCONCLUSIVE.counted(3) == "3 inconclusive"
