"""The CSV a reader downloads holds the same figures as the results table, for every subject and cell."""

from __future__ import annotations

import csv
import io

from benchsite.results.export import COLUMNS, results_csv
from benchsite.results.metrics import METRICS
from benchsite.results.store import load_view
from committed import COMMITTED_DATA


def test_the_csv_has_one_row_per_cell_with_the_tables_figures() -> None:
    view = load_view(COMMITTED_DATA / "wsgi-servers" / "20261123T020452.765734Z-full")  # pinned by its id
    run = view.run
    rows = list(csv.DictReader(io.StringIO(results_csv(view))))
    assert tuple(rows[0]) == COLUMNS
    cells = [(s.name, c.name) for s in run.subjects for c in s.cells]
    assert [(row["subject"], row["cell"]) for row in rows] == cells
    for row in rows:
        found = view.figure(row["subject"], row["cell"])
        summary = found.summary
        assert float(row["rps_median"]) == float(f"{summary.median():.6g}")
        assert float(row["rps_interval_low"]) == float(f"{summary.interval().low:.6g}")
        assert float(row["rps_interval_high"]) == float(f"{summary.interval().high:.6g}")
        assert float(row["server-cpu"]) == float(f"{summary.median(METRICS['server-cpu']):.6g}")
        assert int(row["repetitions_ok"]) == summary.repetitions_ok
        assert row["status"] == found.status
        assert row["tool"] in ("ab", "wrk", "h2load")
    flagged = [row for row in rows if row["status"] != "ok"]
    assert flagged and all(row["status"].startswith("FLAGGED: ") for row in flagged)
