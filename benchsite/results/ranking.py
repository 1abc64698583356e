"""Which is fastest? The servers of one run ranked by median req/s in a cell, each step between neighbours
called by their paired ratio (surely ahead, or not told apart), the figures the load tool set marked."""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.results.view import RunView


@dataclass(frozen=True)
class Ranked:
    """One server's place in a cell: its median req/s, whether the load tool set it, and whether it is surely
    ahead of the next one down (its paired ratio's interval above 1)."""

    subject: str
    label: str
    median: float
    tool_limited: bool  # the load tool, not the server, set its figure
    ahead_of_next: bool | None  # None: the last one
    busy: bool = False  # every repetition was disturbed: the median is a lower bound, not compared


def ranked(view: RunView, cell: str) -> list[Ranked]:
    """The servers that answered in a cell, fastest first: usable figures and those only the load tool held back
    (marked); a failed or otherwise flagged figure has no place."""
    placed = []
    busy: list[Ranked] = []
    for subject in view.run.measured:
        if subject.role != "server":
            continue
        found = view.figure(subject.name, cell)
        median = found.summary.median() if found else None
        if found is not None and median is None and not found.summary.problems:  # only a busy machine's
            at_least = found.summary.at_least_rps()  # a busy machine's figure, a lower bound
            if at_least is not None:
                busy.append(
                    Ranked(
                        subject=subject.name,
                        label=subject.label,
                        median=at_least,
                        tool_limited=False,
                        ahead_of_next=None,
                        busy=True,
                    )
                )
            continue
        if found is None or median is None or not (found.usable or found.tool_limited_only):
            continue
        placed.append((median, subject.name, subject.label, not found.usable))
    placed.sort(reverse=True)
    out = []
    for index, (median, name, label, tool_limited) in enumerate(placed):
        ahead = None
        if index + 1 < len(placed):
            ratio = view.ratio((name, cell), (placed[index + 1][1], cell), usable_only=False)
            ahead = ratio is not None and ratio.low is not None and ratio.low > 1
        out.append(Ranked(subject=name, label=label, median=median, tool_limited=tool_limited, ahead_of_next=ahead))
    for place in sorted(busy, key=lambda place: -place.median):  # a lower bound: ahead of every figure below it only
        below = next((index for index, other in enumerate(out) if not other.busy and other.median < place.median), None)
        out.insert(len(out) if below is None else below, place)
    return out


def ranking_said(view: RunView, cell: str, shown: int = 6) -> str:
    """ "FastWSGI 14,150 (load tool's limit) ≈ socketify.py 13,980 > bjoern 11,020 > …; 7 more in the table"."""
    places = ranked(view, cell)
    if not places:
        return "no server answered"
    parts = []
    for index, place in enumerate(places[:shown]):
        text = f"{place.label} {place.median:,.0f}" + (" (load tool's limit)" if place.tool_limited else "")
        if place.busy:
            text = f"{place.label} at least {place.median:,.0f}, busy"
        if index:
            unknown = place.busy or places[index - 1].busy  # a lower bound is not compared with its neighbours
            between = "; " if unknown else (" > " if places[index - 1].ahead_of_next else " ≈ ")
            text = between + text
        parts.append(text)
    more = len(places) - shown
    return "".join(parts) + (f"; {more} more in the table" if more > 0 else "")
