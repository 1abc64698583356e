"""Whether a page's run stands apart from its machine's other runs: the same machine measured on another day can
differ in more than noise (a VM's host busy elsewhere, a new kernel), and a page that reads one run says so
wherever it does, with what the machine's other runs gave beside it.

A cell is apart when the run's interval of the median req/s lies wholly above, or wholly below, every other run's
interval of that cell on the machine. The note names no cause: one run cannot show why a day differed.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from benchsite.results.view import RunView


@dataclass(frozen=True)
class ApartCell:
    """One cell of the run beyond every other run's interval of it on the machine."""

    subject: str
    cell: str
    share: float  # how far from the other runs' median, as a share of it (positive: more req/s)
    own: float  # the run's median req/s
    others: tuple[float, ...]  # the other runs' medians


def apart_cells(view: RunView, others: Sequence[RunView]) -> tuple[list[ApartCell], int]:
    """The run's cells that lie beyond every other run's interval, and how many cells could be compared."""
    apart = []
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
        if own.low > highest or own.high < lowest:
            values = tuple(each.value for each in theirs)
            share = own.value / statistics.median(values) - 1
            apart.append(ApartCell(subject=key[0], cell=key[1], share=share, own=own.value, others=values))
    return apart, compared


COMPARE_WITHIN = "Days differ beyond a run's own noise: compare servers within one run; the verdicts pool every run."


def drift_said(view: RunView, others: Sequence[RunView]) -> str:
    """What a page's run is beside its machine's other runs: apart from them (`apart_said`), or, where it lies
    among them but they differ from one another beyond their intervals, how far (`spread_said`); "" where its
    machine's runs agree within their intervals, or it has no other run."""
    return apart_said(view, others) or spread_said(view, others)


def spread_said(view: RunView, others: Sequence[RunView]) -> str:
    """ "This machine's 7 runs differ beyond their intervals in 20 of 44 cells, by up to 33 % (Waitress at -c 10:
    2,010 to 2,660 req/s); this run lies among them: …" ("" where no two runs' intervals of a cell lie apart)."""
    runs = [view, *others]
    differ = []
    compared = 0
    for key in view.summaries:
        found = [each.summaries[key].interval() for each in runs if key in each.summaries]
        bounded = [each for each in found if each is not None and each.bounded]
        if len(bounded) < 2:
            continue
        compared += 1
        lowest_high = min(each.high for each in bounded if each.high is not None)
        highest_low = max(each.low for each in bounded if each.low is not None)
        if highest_low > lowest_high:  # two runs' intervals lie apart
            values = [each.value for each in bounded]
            differ.append((max(values) / min(values) - 1, key, min(values), max(values)))
    if not differ:
        return ""
    share, (subject, cell), low, high = max(differ)
    label = view.run.subject_labels.get(subject, subject)
    own = view.summaries[(subject, cell)].median()
    here = f"; this run {own:,.0f}" if own is not None else ""
    return (
        f"This machine's {len(runs)} runs differ beyond their intervals in {len(differ)} of {compared} cells, by up "
        f"to {100 * share:.0f} % ({label} at {view.run.cell_label(cell)}: {low:,.0f} to {high:,.0f} req/s{here}). "
        f"{COMPARE_WITHIN}"
    )


def apart_said(view: RunView, others: Sequence[RunView]) -> str:
    """ "In 12 of its 12 cells this run measured 36 % to 86 % more req/s than this machine's 4 other runs, beyond
    every one's interval (Apache httpd at static: 7,015 req/s here, 4,100 to 5,160 in the others): …" ("" where no
    cell lies apart, or there is no other run to stand apart from)."""
    apart, compared = apart_cells(view, others)
    if not apart:
        return ""
    more = [each for each in apart if each.share > 0]
    less = [each for each in apart if each.share < 0]
    main, rest = (more, less) if len(more) >= len(less) else (less, more)
    word = "more" if main is more else "less"
    shares = sorted(abs(each.share) for each in main)
    usual = sorted(main, key=lambda each: abs(each.share))[len(main) // 2]  # the middle one, as an example
    labels = view.run.subject_labels
    runs = len(others)
    said = (
        f"In {len(main)} of its {compared} cells this run measured {100 * shares[0]:.0f} % to "
        f"{100 * shares[-1]:.0f} % {word} req/s than this machine's {runs} other run{'s' * (runs != 1)}, beyond "
        f"every one's interval ({labels.get(usual.subject, usual.subject)} at {view.run.cell_label(usual.cell)}: "
        f"{usual.own:,.0f} req/s here, {_span(usual.others)} in the other{'s' * (runs != 1)})"
    )
    if rest:
        said += f"; in {len(rest)} it measured {'less' if word == 'more' else 'more'}"
    return said + f". {COMPARE_WITHIN}"


def _span(values: tuple[float, ...]) -> str:
    low, high = min(values), max(values)
    return f"{low:,.0f}" if round(low) == round(high) else f"{low:,.0f} to {high:,.0f}"
