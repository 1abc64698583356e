"""Which server? The ranked list a card shows, read from a committed run."""

from __future__ import annotations

import itertools

from benchsite.results.ranking import ranked, ranking_said
from benchsite.results.store import list_runs, load_view
from committed import COMMITTED_DATA


def test_servers_rank_fastest_first_with_the_load_tools_limit_marked_and_ties_told() -> None:
    view = load_view(list_runs(COMMITTED_DATA / "wsgi-servers", "full")[-1])
    for cell in ("c10", "wrk-c10"):
        places = ranked(view, cell)
        assert [p.median for p in places] == sorted((p.median for p in places), reverse=True)
        for place in places:
            figure = view.figure(place.subject, cell)
            assert (
                figure is not None
                and place.tool_limited == (not figure.usable)
                and (figure.usable or figure.tool_limited_only)
            )
        for upper, lower in itertools.pairwise(places):
            ratio = view.ratio((upper.subject, cell), (lower.subject, cell), usable_only=False)
            assert upper.ahead_of_next == (ratio is not None and ratio.low is not None and ratio.low > 1)
        said = ranking_said(view, cell, shown=3)
        assert said.startswith(f"{places[0].label} {places[0].median:,.0f}") and f"{len(places) - 3} more" in said
    assert not any(p.subject == view.run.ceiling.name for p in ranked(view, "c10") if view.run.ceiling)
