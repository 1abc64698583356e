"""The newest run of a recipe, said on its page's first screen beside the run the page reads: a user who has just
run the recipe finds their own run there, labelled busy or quiet, with what it measured on its own and how it
compares with the page's run.

Its words come from its own figures only: a claim decided on it alone (a busy run's lower bounds decide nothing,
and say so), and its cells beside the page's run's where both ran on one machine (another machine's figures are
compared by the verdicts' ratios, never side by side).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchsite.results.claims import Verdict, decide
from benchsite.results.evidence import Pooled
from benchsite.results.machines import MachineRuns, weighed
from benchsite.results.view import RunView

if TYPE_CHECKING:
    from benchsite.results.published import Published


def newest_run(groups: Sequence[MachineRuns]) -> tuple[MachineRuns, RunView] | None:
    """The newest run of every machine's, with its machine (None: no run)."""
    found = [(group, view) for group in groups for view in group.every_run]
    return max(found, key=lambda pair: pair[1].run.run_id) if found else None


def newest_said(groups: Sequence[MachineRuns], published: Published) -> str:
    """ "The newest run, 2026-11-28 on amd-epyc-2cpu, busy: 257 of 320 repetitions disturbed by others' work; 8
    cells. Alone it decides 1 of 6 conclusions (6: not as claimed); another machine than the page's run: …" (""
    where the page's run is the newest.)"""
    found = newest_run(groups)
    if not groups or found is None or found[1] is groups[0].main:
        return ""
    group, view = found
    disturbed, judged = view.disturbed
    cells = len(view.summaries)
    bounds = sum(summary.median() is None and summary.at_least_rps() is not None for summary in view.summaries.values())
    decided = [
        f"{number}: {verdict.badge.value}"
        for number, verdict in enumerate(alone(view, published), start=1)
        if not verdict.state.decided_nothing
    ]
    ratios = beside_page_run(view, groups[0])
    if ratios is None:
        beside = "another machine than the page's run: they meet only in the verdicts"
    elif not ratios:
        beside = "no cell it shares with the page's run has a figure on both"
    else:
        beside = (
            f"beside the page's run, its req/s{' at least' if view.busy else ''} {min(ratios):.2f}× to "
            f"{max(ratios):.2f}× the page's run's (median {statistics.median(ratios):.2f}×) in the {len(ratios)} "
            "cells both measured"
        )
    measured = f"lower bounds only in {bounds} of its {cells} cells" if bounds else f"{cells} cells"
    listed = f" ({', '.join(decided)})" if decided else ""
    return (
        f"The newest run, {view.run.started_at[:10]} on {group.label}, {'busy' if view.busy else 'quiet'}: "
        f"{disturbed} of {judged} repetitions disturbed by others' work; {measured}. Alone it decides "
        f"{len(decided)} of {len(published.claims)} conclusions{listed}; {beside}."
    )


def alone(view: RunView, published: Published) -> list[Verdict]:
    """Every claim decided on one run alone, as a machine's verdict is weighed (too few rounds decide nothing)."""
    return [weighed(decide(claim, Pooled((view,)), published)) for claim in published.claims]


def pooled_said(view: RunView, groups: Sequence[MachineRuns]) -> str:
    """What the page does with a run: pools it into its machine's verdicts, or (a busy run on a machine with quiet
    runs) shows it labelled, first while it is the newest, and in the history, without pooling it."""
    group = next((found for found in groups if view in found.every_run), None)
    if group is None:
        return "the page does not read it (another profile's run)"
    if view in group.views:
        return f"the page pools it with {group.label}'s other runs into that machine's verdicts"
    return (
        f"measured on a busy machine: the page shows it labelled, first while it is the newest run, and does not "
        f"pool it into {group.label}'s verdicts, which its quiet runs make"
    )


def beside_page_run(view: RunView, page: MachineRuns) -> list[float] | None:
    """Its cells' req/s (a busy run's lower bounds) over the page's run's, where both ran on the page's machine
    (None: another machine, whose figures meet the page's only in the verdicts)."""
    if view not in page.every_run:
        return None
    ratios = []
    for key, summary in view.summaries.items():
        theirs = page.main.summaries.get(key)
        own = summary.median() if summary.median() is not None else summary.at_least_rps()
        other = theirs.median() if theirs is not None else None
        if own and other:
            ratios.append(own / other)
    return ratios
