"""A page's run that stands apart from its machine's other runs says so (the 2026-11-27 intel runs measured 31-87 %
more than the four before them on wsgi-servers)."""

from __future__ import annotations

import re

from benchsite.results.drift import drift_said
from benchsite.results.machines import by_machine
from benchsite.results.store import recipe_views
from committed import COMMITTED_DATA


def machine(recipe: str, name: str):
    return next(g for g in by_machine(recipe_views(COMMITTED_DATA / recipe, "full")) if g.label == name)


def test_a_run_faster_than_every_other_run_of_its_machine_in_most_cells_says_so() -> None:
    group = machine("wsgi-servers", "intel-xeon-processor-2cpu")
    main = group.main
    others = [view for view in group.views if view is not main]
    said = drift_said(main, others)
    found = re.search(
        r"In (\d+) of its \d+ cells this run measured (\d+) % to (\d+) % more req/s than this machine's 4", said
    )
    assert found is not None, said
    cells, low, high = (int(group) for group in found.groups())
    assert "the machine ran faster" not in said  # one run cannot show why a day differed
    assert 0 < low <= high and cells > len(main.summaries) / 2
    for key, summary in main.summaries.items():  # each cell counted apart lies above every other run's interval
        own = summary.interval()
        theirs = [o.summaries[key].interval() for o in others if key in o.summaries]
        if own is not None and own.bounded and all(t is not None and t.bounded for t in theirs) and theirs:
            above = own.low > max(t.high for t in theirs)  # type: ignore[union-attr, operator, type-var]
            below = own.high < min(t.low for t in theirs)  # type: ignore[union-attr, operator, type-var]
            assert not below, key
            cells -= above
    assert cells == 0


def test_a_run_within_its_machines_runs_and_a_machine_of_one_run_say_nothing_apart() -> None:
    group = machine("wsgi-servers", "amd-epyc-2cpu")
    said = drift_said(group.main, [view for view in group.views if view is not group.main])
    assert not said.startswith("In ") and "this run measured" not in said  # not apart: the spread note, if any
    assert drift_said(group.main, []) == ""


def test_runs_that_differ_beyond_their_intervals_say_so_with_the_figures_of_one_cell() -> None:
    """wsgi-servers' amd runs differ by up to a third and more in a cell, and the page said nothing."""
    group = machine("wsgi-servers", "amd-epyc-2cpu")
    others = [view for view in group.views if view is not group.main]
    said = drift_said(group.main, others)
    found = re.search(r"\((.+) at (.+): ([\d,]+) to ([\d,]+) req/s; this run ([\d,]+)\)", said)
    assert found is not None, said
    label, cell_label, low, high, own = found.groups()
    subject = next(name for name, shown in group.main.run.subject_labels.items() if shown == label)
    cell = next(name for name in group.main.run.cell_names if group.main.run.cell_label(name) == cell_label)
    medians = [view.summaries[(subject, cell)].median() for view in group.views if (subject, cell) in view.summaries]
    assert f"{min(m for m in medians if m):,.0f}" == low and f"{max(m for m in medians if m):,.0f}" == high
    assert f"{group.main.summaries[(subject, cell)].median():,.0f}" == own
