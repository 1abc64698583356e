"""The verdict today's run gives on each original conclusion: holds, does not hold, or inconclusive.

A ratio is estimated from the rounds in which both of its figures were measured (see
`intervals`); a claim holds when the whole interval clears its threshold, does not hold when
the whole interval misses it, and is inconclusive when the interval straddles it. A flagged
or missing figure decides nothing (`figures`).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.model.published import AnyClaim, FastestClaim, KeepaliveClaim, Published, RatioClaim
from benchsite.model.run import RunDocument
from benchsite.results.figures import figure
from benchsite.results.intervals import Interval, paired_rounds, ratio_interval
from benchsite.results.stats import metric_values

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
COULD_NOT_RUN = "could not run"
STATUSES = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, COULD_NOT_RUN)

Cell = tuple[str, str]  # (subject, cell)


@dataclass(frozen=True)
class Verdict:
    """A claim's outcome on today's run, with what decided it and the published value beside it."""

    claim: AnyClaim
    status: str
    today: str  # the deciding value with its interval, or why there is none
    published: str
    needs: tuple[Cell, ...] = ()  # the cells whose further rounds could decide an inconclusive claim


def round_values(
    run: RunDocument, subject: str, cell: str, metric: str = "rps", usable_only: bool = True
) -> dict[int, float] | None:
    """Each round's figure of a cell (req/s, or the client's CPU µs per request); None if it did not run,
    or, with usable_only, if it is flagged."""
    found = figure(run, subject, cell)
    record = run.subject(subject)
    cell_record = record.cell(cell) if record else None
    if found is None or (usable_only and not found.usable) or cell_record is None:
        return None
    return metric_values(cell_record, "rps" if metric == "rps" else "client-cpu")


def ratio(run: RunDocument, top: Cell, bottom: Cell, metric: str = "rps", usable_only: bool = True) -> Interval | None:
    """Today's ratio top ÷ bottom from the rounds that measured both; None where a side is unusable."""
    a, b = round_values(run, *top, metric, usable_only), round_values(run, *bottom, metric, usable_only)
    if a is None or b is None:
        return None
    return ratio_interval(paired_rounds(a, b))


def fmt_interval(interval: Interval, digits: int = 2, rounds: bool = True) -> str:
    """1.82 [1.61–2.05] (12 rounds): the estimate and its 95 % interval."""
    if not interval.bounded:
        return f"{interval.value:.{digits}f} (no interval: {interval.count} round)"
    counted = f" ({interval.count} rounds)" if rounds else ""
    return f"{interval.value:.{digits}f} [{interval.low:.{digits}f}–{interval.high:.{digits}f}]{counted}"


def _why_not(run: RunDocument, cells: list[Cell]) -> str:
    reasons = []
    for subject, cell in cells:
        found = figure(run, subject, cell)
        if found is None:
            reasons.append(f"{subject} {cell} did not run")
        elif not found.usable:
            reasons.append(f"{subject} {cell} flagged: {'; '.join(found.flags)}")
    return "; ".join(reasons) or "—"


def _against(interval: Interval, at_least: float | None, at_most: float | None) -> str:
    """Where an interval lies against a claim's bounds."""
    if not interval.bounded:
        return INCONCLUSIVE
    assert interval.low is not None and interval.high is not None
    if (at_least is not None and interval.high < at_least) or (at_most is not None and interval.low > at_most):
        return DOES_NOT_HOLD
    if (at_least is None or interval.low >= at_least) and (at_most is None or interval.high <= at_most):
        return HOLDS
    return INCONCLUSIVE


def _ratio_verdict(claim: RatioClaim, run: RunDocument) -> tuple[str, str, tuple[Cell, ...]]:
    cells = [claim.numerator, claim.denominator]
    estimate = ratio(run, claim.numerator, claim.denominator, claim.metric)
    if estimate is None:
        return COULD_NOT_RUN, _why_not(run, cells), ()
    status = _against(estimate, claim.at_least, claim.at_most)
    return status, fmt_interval(estimate), tuple(cells) if status == INCONCLUSIVE else ()


def _fastest_verdict(claim: FastestClaim, run: RunDocument) -> tuple[str, str, tuple[Cell, ...]]:
    """Holds when the subject is surely ahead of every competitor in every cell; does not hold when
    some competitor is surely ahead in some cell; flagged competitors are named, not compared."""
    competitors = [s for s in (claim.among or [s.name for s in run.measured]) if s != claim.subject]
    behind, unsure, not_compared, needs = [], [], [], []
    for cell in claim.cells:
        if round_values(run, claim.subject, cell) is None:
            return COULD_NOT_RUN, _why_not(run, [(claim.subject, cell)]), ()
        for rival in competitors:
            if figure(run, rival, cell) is None:
                continue  # it does not run here
            estimate = ratio(run, (claim.subject, cell), (rival, cell))
            if estimate is None:
                not_compared.append(f"{rival} {cell}")
                continue
            status = _against(estimate, 1.0, None)
            if status == DOES_NOT_HOLD:
                behind.append(f"{cell}: {rival} ({estimate.value:.2f}×)")
            elif status == INCONCLUSIVE:
                unsure.append(f"{cell}: {rival} ({fmt_interval(estimate, rounds=False)})")
                needs += [(claim.subject, cell), (rival, cell)]
    flagged = f"; flagged, not compared: {_some(not_compared)}" if not_compared else ""
    if behind:  # what decides it; the unsure comparisons no longer matter
        return DOES_NOT_HOLD, f"surely behind {_some(behind)}{flagged}", ()
    if unsure:
        return INCONCLUSIVE, f"not surely ahead of {_some(unsure)}{flagged}", tuple(dict.fromkeys(needs))
    cells = f"all {len(claim.cells)} cells" if len(claim.cells) > 1 else f"cell {claim.cells[0]}"
    return HOLDS, f"surely ahead of every competitor in {cells}{flagged}", ()


def _some(items: list[str], shown: int = 3) -> str:
    """The first few of a list, and how many more."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def _keepalive_verdict(claim: KeepaliveClaim, run: RunDocument) -> tuple[str, str, tuple[Cell, ...]]:
    found = figure(run, claim.subject, claim.cell)
    record = run.subject(claim.subject)
    cell = record.cell(claim.cell) if record else None
    if found is None or not found.usable or cell is None:
        return COULD_NOT_RUN, _why_not(run, [(claim.subject, claim.cell)]), ()
    seen = {rep.result.keepalive_honoured for rep in cell.repetitions if rep.ok and rep.result is not None}
    seen.discard(None)
    if len(seen) != 1:
        return INCONCLUSIVE, "honoured in some repetitions, not in others" if seen else "not measured", ()
    honoured = seen.pop()
    shown = f"{'honoured' if honoured else 'not honoured'} in all {len(cell.repetitions)} repetitions"
    return (HOLDS if honoured == claim.honoured else DOES_NOT_HOLD), shown, ()


def published_value(claim: AnyClaim, published: Published) -> str:
    """What the original page's own figures say on the claim's rule (its single runs have no interval)."""
    if isinstance(claim, KeepaliveClaim):
        found = published.figure(claim.subject, claim.cell)
        honoured = found.result.keepalive_honoured if found and found.result else None
        return "—" if honoured is None else "honoured" if honoured else "not honoured"
    if isinstance(claim, FastestClaim):
        ahead = 0
        for cell in claim.cells:
            own = published.figure(claim.subject, cell)
            if own is None or own.requests_per_s is None:
                return "—"
            rivals = [
                r.requests_per_s
                for r in published.results
                if r.cell == cell
                and r.subject != claim.subject
                and r.requests_per_s is not None
                and (not claim.among or r.subject in claim.among)
            ]
            ahead += all(own.requests_per_s > rival for rival in rivals)
        return f"fastest at {ahead} of {len(claim.cells)}"
    top, bottom = published.figure(*claim.numerator), published.figure(*claim.denominator)
    if top is None or bottom is None:
        return "—"
    a, b = (
        (top.requests_per_s, bottom.requests_per_s)
        if claim.metric == "rps"
        else (top.cpu_us_per_request, bottom.cpu_us_per_request)
    )
    return "—" if a is None or b is None or b == 0 else f"{a / b:.3f}"


def decide(claim: AnyClaim, run: RunDocument, published: Published) -> Verdict:
    """Decide a claim on today's run; show the published value beside it."""
    if isinstance(claim, RatioClaim):
        status, today, needs = _ratio_verdict(claim, run)
    elif isinstance(claim, FastestClaim):
        status, today, needs = _fastest_verdict(claim, run)
    else:
        status, today, needs = _keepalive_verdict(claim, run)
    return Verdict(claim=claim, status=status, today=today, published=published_value(claim, published), needs=needs)


def verdicts(run: RunDocument, published: Published) -> list[Verdict]:
    """Every claim of the original page decided on one run."""
    return [decide(claim, run, published) for claim in published.claims]


def threshold(claim: AnyClaim) -> str:
    """The bound a claim's interval must clear, in words."""
    if isinstance(claim, RatioClaim):
        parts = [f"≥ {claim.at_least:g}"] if claim.at_least is not None else []
        parts += [f"≤ {claim.at_most:g}"] if claim.at_most is not None else []
        return " and ".join(parts)
    if isinstance(claim, FastestClaim):
        return "every ratio to a competitor > 1"
    return "honoured" if claim.honoured else "not honoured"
