"""A verdict's badge says what happened against the claim in a reader's words: never a red or grey word where the
claimed direction held, on any committed page's claim."""

from __future__ import annotations

import pytest

from benchsite.results.claims.base import Badge, State
from benchsite.results.claims.reading import Band, ratio_badge
from benchsite.results.intervals import Interval
from benchsite.results.machines import by_machine
from benchsite.results.published import PUBLISHED_FILE, load_published
from benchsite.results.store import recipe_views
from committed import COMMITTED_DATA

RECIPES = ("cherrypy-speed", "bottle-adapters", "wsgi-servers", "http-clients", "cherokee-vs-apache")


def interval(value: float, low: float, high: float) -> Interval:
    return Interval(value, low, high, level=0.95, count=12)


@pytest.mark.parametrize(
    ("estimate", "band", "badge"),
    [
        (interval(11.8, 9.1, 15.2), Band(3, 10), Badge.AT_LEAST),  # http-clients' 11.8x on "3 to 10x"
        (interval(1.47, 1.40, 1.55), Band(2, None), Badge.WEAKER),  # a keep-alive gain short of "at least 2x"
        (interval(2.5, 2.2, 2.9), Band(2, None), Badge.AS_CLAIMED),
        (interval(14.0, 12.0, 16.0), Band(3, 10), Badge.BEYOND),
        (interval(0.8, 0.7, 0.9), Band(1.5, None), Badge.OPPOSITE),
        (interval(1.1, 0.8, 1.5), Band(1.5, None), Badge.NOT_SETTLED),
        (interval(1.6, 1.2, 2.1), Band(1.5, None), Badge.DIRECTION_ONLY),
        (interval(0.97, 0.82, 1.15), Band(2.5, None), Badge.SHORT),  # cherokee's "three times": surely fails
        (interval(1.2, 0.9, 1.6), Band(None, 0.5), Badge.SHORT),  # "at least 2x slower": not even surely slower
        (interval(0.4, 0.3, 0.45), Band(None, 0.5), Badge.AS_CLAIMED),  # "at least 2x slower", 2.5x slower
        (interval(0.7, 0.6, 0.8), Band(None, 0.5), Badge.WEAKER),  # slower, by less than claimed
        (interval(1.05, 0.98, 1.1), Band(0.9, 1.2), Badge.AS_CLAIMED),  # no direction: "about the same"
        (interval(1.5, 1.3, 1.7), Band(0.9, 1.2), Badge.NOT_AS_CLAIMED),
    ],
)
def test_a_ratio_badge_says_direction_then_size(estimate: Interval, band: Band, badge: Badge) -> None:
    assert ratio_badge(estimate, band) == badge


def test_states_that_decide_nothing_keep_their_own_words() -> None:
    assert Badge.of_state(State.TOO_LITTLE) == Badge.TOO_LITTLE and Badge.TOO_LITTLE.tone == "open"
    assert Badge.of_state(State.TOOL_LIMITED).tone == "open" and Badge.of_state(State.DEPENDS).tone == "machine"
    assert {badge.tone for badge in Badge} == {"met", "short", "missed", "open", "machine"}
    assert all(badge.explained for badge in Badge)


@pytest.mark.parametrize("recipe", RECIPES)
def test_no_committed_claim_whose_direction_held_wears_a_red_or_grey_badge(recipe: str) -> None:
    published = load_published(COMMITTED_DATA / recipe / PUBLISHED_FILE)
    groups = by_machine(recipe_views(COMMITTED_DATA / recipe, "full"), published.reference_machine)
    checked = 0
    for across in published.across(groups):
        for machine in across.machines:
            verdict = machine.verdict
            estimate = verdict.estimate
            if estimate is None or not estimate.bounded or verdict.state.decided_nothing:
                continue
            band = Band(verdict.claim.at_least, verdict.claim.at_most)  # type: ignore[union-attr]
            assert estimate.low is not None and estimate.high is not None
            held = (band.direction > 0 and estimate.low > 1) or (band.direction < 0 and estimate.high < 1)
            if held:
                checked += 1
                assert verdict.badge.tone in ("met", "short"), (across.claim.id, machine.runs.label, verdict.badge)
        if across.state == State.DOES_NOT_HOLD and across.badge.tone == "short":
            assert all(m.verdict.badge.tone == "short" for m in across.deciding)
    assert checked or recipe == "cherokee-vs-apache"  # cherokee's only ratio is not settled on either machine
