"""Claim kinds as a registry: each kind is one module holding its schema and its decision together.

A new kind is one class (a `ClaimBase` with `kind`, `rule`, `threshold`, `decide` and
`published_value`) and one entry on each registry line below.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Discriminator

from benchsite.results.claims.base import ClaimBase, State, Verdict, fmt_interval
from benchsite.results.claims.fastest import FastestClaim
from benchsite.results.claims.keepalive import KeepaliveClaim
from benchsite.results.claims.ratio import RatioClaim
from benchsite.results.evidence import Evidence
from benchsite.results.originals import OriginalFigures

# The registry: one entry per claim kind on each line.
CLAIM_KINDS: dict[str, type[ClaimBase]] = {"ratio": RatioClaim, "keepalive": KeepaliveClaim, "fastest": FastestClaim}
AnyClaim = RatioClaim | KeepaliveClaim | FastestClaim

Claim = Annotated[AnyClaim, Discriminator("kind")]

__all__ = ["CLAIM_KINDS", "AnyClaim", "Claim", "State", "Verdict", "decide", "fmt_interval", "verdicts"]


def decide(claim: AnyClaim, view: Evidence, published: OriginalFigures) -> Verdict:
    """Decide a claim on one run; show the published value beside it."""
    outcome = claim.decide(view)
    return Verdict(
        claim=claim,
        state=outcome.state,
        today=outcome.today,
        published=claim.published_value(published),
        needs=outcome.needs,
        estimate=outcome.estimate,
        rests_on=outcome.rests_on,
        details=outcome.details,
        not_compared=outcome.not_compared,
        reading=outcome.reading or outcome.today,
        said=outcome.said,
    )


def verdicts(view: Evidence, claims: tuple[AnyClaim, ...], published: OriginalFigures) -> list[Verdict]:
    """Every claim decided on one run."""
    return [decide(claim, view, published) for claim in claims]
