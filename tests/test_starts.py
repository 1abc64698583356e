"""Several starts of a run's servers: the profile's blocks of rounds, the run's hash seeds, the intervals taken
over the starts (no margin then), and a real A/B run whose every copy really started once per start."""

from __future__ import annotations

import json
import math
import re
from html import unescape
from pathlib import Path

import numpy as np
import pytest
from pages import one
from scipy import stats
from test_versus import committed_power

from benchsite.errors import BenchError
from benchsite.model.conf import PROFILE_DEFAULTS, Profile
from benchsite.model.method import METHOD_DIR
from benchsite.model.upgrade import read_method, read_run
from benchsite.results.comparing import (
    MARGIN,
    WORK_NOISE,
    alike_rounds,
    paired_cells,
    per_start,
    start_ratios,
    time_untold,
)
from benchsite.results.method import slices
from benchsite.results.power import power_level
from benchsite.results.store import list_runs, load_view
from benchsite.results.view import RunView
from committed import COMMITTED_DATA
from conftest import REPO, run_invoke


def profile(rounds: int, starts: int) -> Profile:
    return Profile.from_json({**PROFILE_DEFAULTS, "name": "p", "requests": 10, "rounds": rounds, "starts": starts}, "t")


def test_the_rounds_are_split_between_the_starts_in_blocks_and_further_rounds_go_to_the_last() -> None:
    six = profile(16, 6)
    assert six.first_rounds() == [1, 4, 7, 9, 12, 15]
    assert [six.start_of(index) for index in range(1, 20)] == [1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 6]
    assert profile(5, 1).first_rounds() == [1] and profile(5, 5).first_rounds() == [1, 2, 3, 4, 5]


def test_more_starts_than_rounds_is_a_one_line_error() -> None:
    with pytest.raises(BenchError, match=r"starts \(4\) is above rounds \(3\): lower starts"):
        profile(3, 4)


def run_with(starts: list[int] | None, changes: dict[tuple[str, int], float] | None = None) -> RunView:
    """The committed A/A power run (16 rounds) as if its servers had started at these rounds (a constructed run:
    never stored), others' busy time set on some repetitions ({(copy, round): share of its wall time})."""
    source = committed_power()[1][1][0].run
    document = json.loads(source.run_file.read_text())
    document["starts"] = None if starts is None else [{"first_round": r, "hash_seed": r} for r in starts]
    for subject in document["subjects"]:
        columns = subject["cells"][0]["repetitions"]["columns"]
        for position, index in enumerate(columns["index"]):
            share = (changes or {}).get((subject["name"], index))
            if share is not None:
                columns["other_busy_s"][position] = share * columns["wall_s"][position]
                columns["steal_s"][position] = 0.0
                columns["disturbed"][position] = share > source.settings.disturbed_share
    return RunView(read_run(document, source.run_file).stored_at(source.path))


def test_over_several_starts_the_interval_is_the_t_interval_of_each_starts_geometric_mean_and_has_no_margin() -> None:
    view = run_with([1, 5, 9, 13])
    rounds = alike_rounds(view, "framework-a", "framework-b", "c1")
    assert len(rounds) == 16
    means = [math.exp(np.mean(np.log([rounds[i] for i in range(first, first + 4)]))) for first in (1, 5, 9, 13)]
    ratios, margin = per_start(view, rounds)
    assert ratios == pytest.approx(means) and margin == 0.0
    [cell] = paired_cells(view)
    low, high = stats.t.interval(0.95, 3, loc=np.mean(np.log(means)), scale=stats.sem(np.log(means)))
    assert cell.time is not None and cell.time.count == 4 and cell.time_margin == 0.0
    assert (cell.time.low, cell.time.high) == pytest.approx((math.exp(low), math.exp(high)))


def test_with_one_start_the_rounds_are_the_values_and_the_margin_stays() -> None:
    [cell] = paired_cells(run_with(None))
    assert cell.time is not None and cell.time.count == 16 and cell.time_margin == MARGIN


def test_where_pairs_remain_in_one_start_only_the_rounds_still_give_time_with_the_margin() -> None:
    hit = {("framework-a", index): 0.9 for index in range(5, 17)}  # A alone hit in starts 2-4: their pairs go
    [cell] = paired_cells(run_with([1, 5, 9, 13], hit))
    assert cell.time is not None and cell.time.count == 4 and cell.time_margin == MARGIN


def test_a_run_without_pairs_says_why_time_cannot_tell_and_what_to_do() -> None:
    view = run_with([1, 5, 9, 13], {("framework-a", index): 0.9 for index in range(1, 17)})
    [cell] = paired_cells(view)
    assert cell.time is None and cell.work is not None  # work still answers
    said = time_untold(view, cell)
    assert said is not None and "16 of 16 rounds" in said and "judge by work, or re-run on a quiet machine" in said
    assert time_untold(run_with(None), paired_cells(run_with(None))[0]) is None


def test_work_over_starts_takes_each_starts_total_so_a_collection_a_batch_late_cancels() -> None:
    a = [100.0, 110.0, 100.0, 200.0, 200.0, 200.0]  # start 2's collection in batch 2 on A, in batch 3 on B
    b = [100.0, 100.0, 110.0, 220.0, 220.0, 220.0]
    assert start_ratios(a, b, 3) == pytest.approx([1.0, 1.1])


@pytest.mark.integration
def test_each_copy_of_an_ab_run_really_starts_once_per_start_with_that_starts_hash_seed(tmp_path: Path) -> None:
    side = tmp_path / "side"  # B's app says which hash seed its process runs with
    side.mkdir()
    app = (REPO / "recipes" / "cherrypy-speed" / "raw_wsgi_app.py").read_text()
    seed_line = 'import os, sys\nprint("hash seed:", os.environ.get("PYTHONHASHSEED"), file=sys.stderr, flush=True)\n'
    (side / "raw_wsgi_app.py").write_text(seed_line + app)
    result = run_invoke(
        "versus", "cherrypy-speed", "-b", f"dir:{side}", "--subjects", "raw-wsgi", "--profile", "versus-quick",
        "--data-dir", str(tmp_path / "data"), timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "servers started 3" in result.stdout and "Traceback" not in result.stderr
    [run_dir] = list_runs(tmp_path / "data" / "cherrypy-speed")
    view = load_view(run_dir)
    starts = view.run.starts
    assert starts is not None and [s.first_round for s in starts] == [1, 2, 3]
    seeds = [start.hash_seed for start in starts]
    assert len(set(seeds)) == 3
    logs = run_dir / "logs"

    def seed_in(log: str) -> int:
        [said] = re.findall(r"hash seed: (\d+)", (logs / log).read_text())
        return int(said)

    assert [seed_in(name) for name in ("raw-wsgi-b.log", "raw-wsgi-b-start2.log", "raw-wsgi-b-start3.log")] == seeds
    assert [seed_in(name) for name in ("raw-wsgi-b-callgrind.log", "raw-wsgi-b-callgrind-start2.log")] == seeds[:2]
    for name in ("raw-wsgi-a.log", "raw-wsgi-a-start2.log", "raw-wsgi-a-start3.log", "raw-wsgi-a-callgrind-start2.log"):
        assert (logs / name).is_file(), name  # A started as often, with the same seeds (its app prints none)
    count = view.run.counting.of("raw-wsgi-b", "c1")  # type: ignore[union-attr]
    assert count is not None and count.error is None and len(count.batches) == 6  # three batches in each start
    [cell] = paired_cells(view)
    assert (
        cell.work is not None and cell.work.count == 2 and cell.work_margin == WORK_NOISE
    )  # instructions: any machine
    reps = [rep for copy in ("raw-wsgi-a", "raw-wsgi-b") for rep in view.run.subject(copy).cells[0].repetitions]  # type: ignore[union-attr]
    if any(rep.disturbed for rep in reps):  # a busy machine: a start whose rounds were hit on one side has none
        assert cell.time is None or 1 <= cell.time.count <= 3
    else:
        assert cell.time is not None and cell.time.count == 3 and cell.time_margin == 0.0


def committed_record(name: str) -> list[tuple[str, list[RunView]]]:
    record = read_method(COMMITTED_DATA / METHOD_DIR / f"{name}.toml")
    return [(s.label, [load_view(path) for path in s.run_dirs(COMMITTED_DATA)]) for s in record.sets]


def test_a_slice_sets_scatter_is_the_median_of_its_runs_standard_deviations_of_log_round_ratios() -> None:
    for label, views in committed_record("slices"):
        found = slices(label, views, "framework", "c1")
        spreads = []
        for view in views:
            rates = {
                side: {
                    rep.index: rep.result.requests_per_s
                    for rep in view.run.subject(f"framework-{side}").cell("c1").repetitions
                    if rep.result
                }  # type: ignore[union-attr]
                for side in "ab"
            }
            logs = [
                math.log(rates["b"][i] / rates["a"][i]) for i in alike_rounds(view, "framework-a", "framework-b", "c1")
            ]
            spreads.append(float(np.std(logs, ddof=1)))
        assert found.runs == len(views) >= 2 and found.spread == pytest.approx(float(np.median(spreads)))
        assert found.per_second == pytest.approx(found.spread * math.sqrt(found.round_s))
        assert found.requests == views[0].run.profile.requests


@pytest.mark.integration
def test_the_pages_show_the_slices_and_the_power_counts_recomputed_from_the_runs(committed_site: Path) -> None:
    methodology = unescape((committed_site / "methodology.html").read_text())
    for label, views in committed_record("slices"):
        found = slices(label, views, "framework", "c1")
        assert one(methodology, slices=label).text == f"{100 * found.per_second:.1f} %"
    opening = unescape((committed_site / "versus.html").read_text())
    for label, views in committed_record("power")[1:]:
        level = power_level(label, views)
        counts = f"{level.time_called} of {level.runs} runs by time and {level.work_called} of {level.runs} by work"
        name = label.split(" (")[0]
        said = f"an unchanged app (A/A) was called changed in {counts}" if name == "A/A" else f"a {name} slowdown"
        assert said in " ".join(opening.split()) and counts in " ".join(opening.split())
