"""Verdicts a reader cannot misread: each state beside a sentence giving direction and size in words, no state
decided by evidence its own line calls too little, the rule stated once and linked."""

from __future__ import annotations

from html import unescape
from pathlib import Path

import pytest
from pages import find

from benchsite.results.change_words import cells_said, change_said, fmt_sees
from benchsite.results.claims import State
from benchsite.results.claims.reading import Band, ratio_reading, size_against
from benchsite.results.comparing import MARGIN, PairedCell
from benchsite.results.factors import FASTER, MORE_CPU, factor, factor_range, percent_or_factor
from benchsite.results.intervals import Interval
from benchsite.results.machines import ACROSS_MACHINES_RULE, MIN_EVIDENCE_ROUNDS, ClaimAcross, by_machine
from benchsite.results.published import load_published
from benchsite.results.store import recipe_views
from committed import COMMITTED_DATA

RECIPES = ("cherrypy-speed", "bottle-adapters", "wsgi-servers", "http-clients", "cherokee-vs-apache")


def between(value: float, low: float, high: float) -> Interval:
    return Interval(value, low, high, 0.95, 5)


def test_large_ratios_read_as_factors() -> None:
    assert factor(0.00173) == "578× slower" and factor(1.25) == "1.25× faster" and factor(14.3) == "14.3× faster"
    assert factor_range(between(0.00173, 0.00118, 0.00253)) == "395× to 847× slower"
    assert factor_range(between(1.1, 0.81, 1.5)) == "from 1.23× slower to 1.50× faster"
    assert percent_or_factor(0.993) == "0.7 % slower" and percent_or_factor(1 / 143) == "143× slower"


def test_an_interval_that_spans_one_says_the_direction_is_not_settled() -> None:
    """cherokee-vs-apache: "3× faster" at 1.10 [0.81–1.50] is surely less than claimed, and whether Cherokee is
    faster at all is not settled."""
    said = ratio_reading(between(1.10, 0.81, 1.50), Band(2.5, None), "Cherokee", "Apache", FASTER)
    assert "whether Cherokee is faster or slower than Apache is not settled" in said
    assert "Direction: not settled." in said and "Size: less than claimed (claimed: at least 2.50× faster)" in said


def test_a_size_beyond_the_claimed_range_is_not_read_as_unknown() -> None:
    """http-clients: "3 to 10 times the CPU" at 11.77 [9.56–14.50]: at least as much as claimed, perhaps more."""
    said = ratio_reading(between(11.77, 9.56, 14.50), Band(3, 10), "requests", "pycurl", MORE_CPU)
    assert said.startswith("requests surely needs more CPU per request than pycurl: 11.8× (95 %: 9.56× to 14.5×)")
    assert "Direction: as claimed." in said and "Size: as claimed or more, not settled" in said


@pytest.mark.parametrize(
    ("interval", "band", "said"),
    [
        (between(1.3, 1.2, 1.4), Band(1.5, None), "less than claimed"),
        (between(1.8, 1.6, 2.0), Band(1.5, None), "as claimed"),
        (between(1.4, 1.3, 1.5), Band(None, 1.2), "more than claimed"),
        (between(1.6, 1.4, 1.8), Band(1.5, 3.0), "as claimed or less, not settled"),
        (between(0.3, 0.25, 0.34), Band(None, 0.5), "as claimed"),  # "at least 2× slower", 3.4× slower
        (between(0.6, 0.55, 0.65), Band(None, 0.5), "less than claimed"),  # 1.7× slower
        (between(0.15, 0.1, 0.2), Band(0.25, 0.5), "more than claimed"),  # "2× to 4× slower", 6.7× slower
    ],
)
def test_the_size_is_read_along_the_claimed_direction(interval: Interval, band: Band, said: str) -> None:
    assert size_against(interval, band) == said


def verdict_views(recipe: str, made_before: str | None = None) -> list[ClaimAcross]:
    """Every claim over the committed full runs (those whose id sorts before `made_before`, where given)."""
    published = load_published(COMMITTED_DATA / recipe / "published.toml")
    views = [
        view
        for view in recipe_views(COMMITTED_DATA / recipe, "full")
        if made_before is None or view.run.run_id < made_before
    ]
    return published.across(by_machine(views, published.reference_machine))


# bottle-adapters as issue 64 found it: one machine's claims resting on a 2-round run alone, and a fastest claim
# decided without some comparisons (later runs of that machine add the rounds and comparisons it lacked).
ISSUE_64_DATA = "20261127T"


@pytest.mark.parametrize("recipe", RECIPES)
def test_no_state_is_decided_by_evidence_its_own_line_calls_too_little(recipe: str) -> None:
    for claim in verdict_views(recipe):
        for machine in claim.machines:
            estimate = machine.verdict.estimate
            if estimate is not None and estimate.count < MIN_EVIDENCE_ROUNDS:
                assert machine.verdict.state.decided_nothing, (claim.claim.id, machine.runs.label)
                assert machine.too_little_evidence or machine.verdict.state != State.TOO_LITTLE
        counted = [m for m in claim.machines if not m.verdict.state.decided_nothing]
        if not counted and any(m.verdict.state == State.TOO_LITTLE for m in claim.machines):
            assert claim.state == State.TOO_LITTLE, claim.claim.id


def test_bottle_adapters_two_rounds_say_not_enough_evidence() -> None:
    """The issue's case: "DOES NOT HOLD" on one machine whose 2-round figure its line called too little."""
    states = {claim.claim.id: claim.state for claim in verdict_views("bottle-adapters", ISSUE_64_DATA)}
    assert states["cherrypy-beats-wsgiref"] == State.TOO_LITTLE == states["paste-slower-than-wsgiref"]


def test_a_fastest_claim_decided_without_some_comparisons_says_so_in_its_state() -> None:
    fapws3 = next(c for c in verdict_views("bottle-adapters", ISSUE_64_DATA) if c.claim.id == "fapws3-fastest")
    assert fapws3.state == State.HOLDS and "comparisons not made" in fapws3.not_compared


@pytest.mark.integration
def test_every_undecided_or_failed_verdict_says_direction_and_size_in_words(committed_site: Path) -> None:
    """Every answer-card line that reads INCONCLUSIVE or DOES NOT HOLD by the rule has a sentence beside it: which
    way, how surely, as factors; a ratio claim's also says its direction and size against the claim's (the claims
    table behind the card does not say it again)."""
    checked = 0
    for recipe in RECIPES:
        html = unescape((committed_site / "recipes" / f"{recipe}.html").read_text())
        claims = {claim.claim.id: claim for claim in verdict_views(recipe)}
        assert not find(html, reading="verdict", recipe=recipe, scope="all")  # said once, on the card
        for state in find(html, recipe=recipe, scope="answer"):
            if state.data.get("state") not in (State.INCONCLUSIVE, State.DOES_NOT_HOLD):
                continue
            tag = {k: v for k, v in state.data.items() if k in ("recipe", "claim", "scope")}
            [reading] = find(html, reading="verdict", **tag)
            words = reading.text
            assert "×" in words or "connections alive" in words, words
            assert any(sure in words for sure in ("surely", "not settled", "kept connections", "not the fastest"))
            claim = claims[tag["claim"]].claim
            if claim.kind == "ratio" and "too few" not in words:
                band = Band(claim.at_least, claim.at_most)
                assert ("Direction:" in words) == (band.direction != 0) and ("Size:" in words) == band.sized, words
            checked += 1
    assert checked >= 5


@pytest.mark.integration
def test_the_verdict_rule_is_stated_once_and_every_page_links_it(committed_site: Path) -> None:
    rule = " ".join(ACROSS_MACHINES_RULE.replace("*", "").split())[:120]
    stating = []
    for page in committed_site.rglob("*.html"):
        text = " ".join(unescape(page.read_text()).split())
        stripped = " ".join(text.replace("<em>", "").replace("</em>", "").split())
        if rule in stripped:
            stating.append(page.relative_to(committed_site).as_posix())
    assert stating == ["methodology.html"]
    for recipe in RECIPES:
        assert 'href="../methodology.html#verdict-rule"' in (committed_site / "recipes" / f"{recipe}.html").read_text()
    assert 'href="methodology.html#verdict-rule"' in (committed_site / "verdicts.html").read_text()


def test_an_ab_change_far_beyond_half_reads_as_a_factor_in_the_terminal_and_on_the_page() -> None:
    """`invoke versus` printed "-99.3 %" and "sees ≥ 474.7 %" for a 143× slowdown."""
    slowdown = Interval(1 / 143, 1 / 550, 1 / 36, 0.95, 12)
    assert change_said(slowdown, True) == "143× slower (95 %: 36.0× to 550×), changed"
    said = change_said(Interval(0.952, 0.939, 0.965, 0.95, 12), True)
    assert said == "4.8 % slower (95 %: 3.5 % to 6.1 %), changed"
    assert change_said(Interval(0.952, 0.939, 0.965, 0.95, 12), True, factors=True).startswith("1.05× slower")
    assert fmt_sees(4.747) == "≥ 5.75× either way" and fmt_sees(0.021) == "≥ 2.1 %"


def test_a_one_sided_change_is_said_at_the_strongest_its_rounds_support() -> None:
    """A stall of 51× to 600× in each round read "1.39× slower or beyond" (the interval's edge alone)."""
    ratios = (1 / 51.4, 1 / 600, 1 / 120)
    cell = PairedCell(
        subject="raw-wsgi",
        a="raw-wsgi-a",
        b="raw-wsgi-b",
        cell="c10-k",
        time=Interval(1 / 180, 1 / 5000, 1 / 1.39, 0.95, 3),
        work=None,
        time_margin=MARGIN,
        time_bound="at most",
        time_ratios=ratios,
    )
    assert cell.time_changed and cell.weakest_round == max(ratios)
    said = cells_said([cell])[0][0]
    assert said.startswith("51.4× slower or more in each of its 3 rounds (1.39× slower or beyond at 95 %)")
    assert said.endswith(": changed")
