"""The CSV a reader downloads holds the same figures as the results table, for every subject and cell."""

from __future__ import annotations

import csv
import io

from benchsite.results.export import COLUMNS, results_csv
from benchsite.results.figures import figure
from benchsite.results.store import latest_run, load_run
from conftest import REPO


def test_the_csv_has_one_row_per_cell_with_the_tables_figures() -> None:
    run = load_run(latest_run(REPO / "data" / "wsgi-servers", "full"))
    rows = list(csv.DictReader(io.StringIO(results_csv(run))))
    assert tuple(rows[0]) == COLUMNS
    cells = [(s.name, c.name) for s in run.subjects for c in s.cells]
    assert [(row["subject"], row["cell"]) for row in rows] == cells
    for row in rows:
        found = figure(run, row["subject"], row["cell"])
        summary = found.summary
        assert float(row["rps_median"]) == float(f"{summary.rps_median:.6g}")
        assert float(row["rps_interval_low"]) == float(f"{summary.rps_interval.low:.6g}")
        assert float(row["rps_interval_high"]) == float(f"{summary.rps_interval.high:.6g}")
        assert int(row["repetitions_ok"]) == summary.repetitions_ok
        assert row["status"] == found.status
        assert row["tool"] in ("ab", "wrk")
    flagged = [row for row in rows if row["status"] != "ok"]
    assert flagged and all(row["status"].startswith("FLAGGED: ") for row in flagged)
