"""Whether a page's run stands apart from its machine's other runs: the same machine measured on another day can
differ in more than noise (a VM's host busy elsewhere, a new kernel), and a page that reads one run says so
wherever it does, with what the machine's other runs gave beside it.

A cell is apart when the run's interval of the median req/s lies wholly above, or wholly below, every other run's
interval of that cell on the machine; the machine's runs differ in a cell where any two runs' intervals lie apart.
The note names no cause: one run cannot show why a day differed.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from benchsite.results.view import RunView

COMPARE_WITHIN = "Days differ beyond a run's own noise: compare servers within one run; the verdicts pool every run."


@dataclass(frozen=True)
class CellAcrossRuns:
    """One (subject, cell) of the page's run beside the machine's other runs."""

    subject: str
    cell: str
    own: float  # the page's run's median req/s
    others: tuple[float, ...]  # the other runs' medians (those with an interval)
    apart: bool  # the page's run lies beyond every other run's interval
    differ: bool  # some two of the machine's runs (the page's included) lie apart

    @property
    def share(self) -> float:
        """How far the page's run lies from the other runs' median, as a share of it (positive: more req/s)."""
        return self.own / statistics.median(self.others) - 1

    @property
    def spread(self) -> float:
        """The largest of the machine's medians over the smallest, less one."""
        values = (self.own, *self.others)
        return max(values) / min(values) - 1


def across_runs(view: RunView, others: Sequence[RunView]) -> list[CellAcrossRuns]:
    """Every cell the page's run and at least one other run measured with an interval."""
    found = []
    for key, summary in view.summaries.items():
        own = summary.interval()
        theirs = [
            each
            for other in others
            if key in other.summaries and (each := other.summaries[key].interval()) is not None and each.bounded
        ]
        if own is None or not own.bounded or not theirs or summary.median() is None:
            continue
        assert own.low is not None and own.high is not None
        highs = [each.high for each in theirs if each.high is not None]
        lows = [each.low for each in theirs if each.low is not None]
        found.append(
            CellAcrossRuns(
                subject=key[0],
                cell=key[1],
                own=own.value,
                others=tuple(each.value for each in theirs),
                apart=own.low > max(highs) or own.high < min(lows),
                differ=max(own.low, *lows) > min(own.high, *highs),
            )
        )
    return found


def drift_said(view: RunView, others: Sequence[RunView]) -> str:
    """ "In 12 of its 12 cells this run measured 36 % to 86 % more req/s than this machine's 4 other runs, beyond
    every one's interval (Apache httpd at static: 7,015 req/s here, 3,964 to 4,690 in the others). …" where most of
    its cells lie apart one way; else, where the machine's runs differ beyond their intervals, by how much, in the
    cell that differs most, with this run's figure; "" where they agree, or there is no other run."""
    cells = across_runs(view, others)
    labels, runs = view.run.subject_labels, len(others)
    apart = [each for each in cells if each.apart]
    more = [each for each in apart if each.share > 0]
    less = [each for each in apart if each.share < 0]
    main, rest = (more, less) if len(more) >= len(less) else (less, more)
    if main:
        word = "more" if main is more else "less"
        shares = sorted(abs(each.share) for each in main)
        usual = sorted(main, key=lambda each: abs(each.share))[len(main) // 2]  # the middle one, as an example
        said = (
            f"In {len(main)} of its {len(cells)} cells this run measured {100 * shares[0]:.0f} % to "
            f"{100 * shares[-1]:.0f} % {word} req/s than this machine's {runs} other run{'s' * (runs != 1)}, beyond "
            f"every one's interval ({labels.get(usual.subject, usual.subject)} at {view.run.cell_label(usual.cell)}: "
            f"{usual.own:,.0f} req/s here, {_span(usual.others)} in the other{'s' * (runs != 1)})"
        )
        if rest:
            said += f"; in {len(rest)} it measured {'less' if word == 'more' else 'more'}"
        return f"{said}. {COMPARE_WITHIN}"
    differ = [each for each in cells if each.differ]
    if not differ:
        return ""
    widest = max(differ, key=lambda each: each.spread)
    values = (widest.own, *widest.others)
    return (
        f"This machine's {runs + 1} runs differ beyond their intervals in {len(differ)} of {len(cells)} cells, by up "
        f"to {100 * widest.spread:.0f} % ({labels.get(widest.subject, widest.subject)} at "
        f"{view.run.cell_label(widest.cell)}: {_span(values)} req/s; this run {widest.own:,.0f}). {COMPARE_WITHIN}"
    )


def _span(values: Sequence[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:,.0f}" if round(low) == round(high) else f"{low:,.0f} to {high:,.0f}"
