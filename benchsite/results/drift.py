"""Whether a page's run stands apart from its machine's other runs: the same machine measured on another day can
differ in more than noise (a VM's host busy elsewhere, a new kernel), and a page that reads one run says so when
that run does.

A cell is apart when the run's interval of the median req/s lies wholly above, or wholly below, every other run's
interval of that cell on the machine; the run stands apart when most of its cells are apart the same way.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from benchsite.results.view import RunView

MOST = 0.5  # more than this share of the cells apart, one way: the run stands apart


def apart_said(view: RunView, others: Sequence[RunView]) -> str:
    """ "It measured 31 % to 87 % more req/s than this machine's 4 other runs in 33 of its 36 cells, beyond every
    one's interval: the machine ran faster that day (...)" ("" when it does not stand apart, or has no other run
    to stand apart from)."""
    ways: dict[int, list[float]] = {1: [], -1: []}
    compared = 0
    for key, summary in view.summaries.items():
        own = summary.interval()
        found = [other.summaries[key].interval() for other in others if key in other.summaries]
        theirs = [each for each in found if each is not None and each.bounded]
        if own is None or not own.bounded or not theirs or summary.median() is None:
            continue
        compared += 1
        assert own.low is not None and own.high is not None
        highest = max(each.high for each in theirs if each.high is not None)
        lowest = min(each.low for each in theirs if each.low is not None)
        middle = statistics.median(each.value for each in theirs)
        if own.low > highest:
            ways[1].append(own.value / middle - 1)
        elif own.high < lowest:
            ways[-1].append(1 - own.value / middle)
    way = max(ways, key=lambda side: len(ways[side]))
    shares = ways[way]
    if not compared or len(shares) <= MOST * compared:
        return ""
    word, pace = ("more", "faster") if way > 0 else ("less", "slower")
    runs = len(others)
    return (
        f"It measured {100 * min(shares):.0f} % to {100 * max(shares):.0f} % {word} req/s than this machine's "
        f"{runs} other run{'s' * (runs != 1)} in {len(shares)} of its {compared} cells, beyond every one's "
        f"interval: the machine ran {pace} that day (a VM shares its host), so compare servers within one run; "
        "the verdicts pool every run."
    )
