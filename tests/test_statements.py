"""Every statement a reader sees, re-derived from its evidence: the site built from the committed data says nothing
that published.toml, run.json and the tools' raw output do not bear out (statements.py restates each rule), and
each wrong statement a reader once found on the pages, kept here as a fixture, is caught."""

from __future__ import annotations

from pathlib import Path

import pytest
from pages import find, one, tagged
from statements import (
    beside_problems,
    bound_problems,
    card_badge_problems,
    claims_of,
    drift_problems,
    machine_badge_problems,
    newest_run_of,
    pick_problems,
    round_slowdowns,
    stall_problems,
    tally_problems,
)

from benchsite.results.machines import by_machine
from benchsite.results.published import PUBLISHED_FILE, load_published
from benchsite.results.store import recipe_views
from committed import COMMITTED_DATA

RECIPES = ("cherrypy-speed", "bottle-adapters", "wsgi-servers", "http-clients", "cherokee-vs-apache")
PICKED = ("wsgi-servers", "bottle-adapters")
VERSUS_RUN = "experiments/versus/cherrypy-speed/20261128T014839.187179Z-versus"  # the A/B page's example


def page(site: Path, recipe: str) -> str:
    return (site / "recipes" / f"{recipe}.html").read_text()


def card_lines(html: str, recipe: str) -> dict[str, tuple[str, list[tuple[str, str | None]]]]:
    """Each claim on the card: its badge and each machine's (badge, shown estimate)."""
    found = {}
    for badge in find(html, recipe=recipe, scope="answer"):
        if "badge" not in badge.data:
            continue
        claim = badge.data["claim"]
        machines = []
        for machine in find(html, recipe=recipe, scope="answer", claim=claim, verdict="machine"):
            key = machine.data["machine"]
            shown = find(html, recipe=recipe, scope="answer", claim=claim, estimate="answer", machine=key)
            machines.append((machine.text, shown[0].text if shown else None))
        found[claim] = (badge.data["badge"], machines)
    return found


# --- the committed site -------------------------------------------------------------------------------------


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_badge_on_a_card_follows_from_its_machines_estimates(committed_site: Path, recipe: str) -> None:
    claims = claims_of(COMMITTED_DATA, recipe)
    problems = []
    lines = card_lines(page(committed_site, recipe), recipe)
    assert set(lines) == set(claims)
    for claim_id, (badge, machines) in lines.items():
        claim = claims[claim_id]
        for machine_badge, shown in machines:
            problems += machine_badge_problems(claim, machine_badge, shown or "")
        problems += card_badge_problems(badge, machines, claim)
    assert not problems, problems


def test_the_home_page_counts_what_the_cards_say(committed_site: Path) -> None:
    home = (committed_site / "index.html").read_text()
    for recipe in RECIPES:
        tally = one(home, recipe=recipe, tally="verdicts").text
        badges = [badge for badge, _ in card_lines(page(committed_site, recipe), recipe).values()]
        assert not tally_problems(tally, badges), (recipe, tally, badges)


@pytest.mark.parametrize("recipe", PICKED)
def test_every_pick_names_the_kind_of_client_its_cell_measured(committed_site: Path, recipe: str) -> None:
    html = page(committed_site, recipe)
    picks = [element for element in tagged(html) if "pick" in element.data]
    assert picks
    for element in picks:
        cell = element.data["pick"]
        run = find(html, recipe=recipe, figure="rps", cell=cell)[0].data["run"]
        ranking = one(html, recipe=recipe, ranking=cell).text if find(html, recipe=recipe, ranking=cell) else ""
        assert not pick_problems(element.text, COMMITTED_DATA / recipe / run, cell, ranking), element.text


def test_the_ab_example_says_each_bound_within_twice_its_weakest_round(committed_site: Path) -> None:
    html = (committed_site / "versus.html").read_text()
    run_dir = COMMITTED_DATA / VERSUS_RUN
    checked = 0
    for element in find(html, currency="time", run=run_dir.name):
        if "or more in each" not in element.text and "or beyond" not in element.text:
            continue
        cell = element.data["versus"].removeprefix("raw-wsgi-")
        slowdowns = round_slowdowns(run_dir, "raw-wsgi-a", "raw-wsgi-b", cell)
        assert not bound_problems(element.text, slowdowns), element.text
        checked += 1
    assert checked  # the example's -c 10 -k is a one-sided bound


@pytest.mark.parametrize("recipe", RECIPES)
def test_a_drift_note_names_no_cause_and_quotes_what_the_machine_gives(committed_site: Path, recipe: str) -> None:
    html = page(committed_site, recipe)
    notes = find(html, recipe=recipe, drift="apart")
    published = load_published(COMMITTED_DATA / recipe / PUBLISHED_FILE)
    group = by_machine(recipe_views(COMMITTED_DATA / recipe, "full"), published.reference_machine)[0]
    for note in notes:
        medians: dict[tuple[str, str], list[float]] = {}
        for view in group.views:
            for key, summary in view.summaries.items():
                if (value := summary.median()) is not None:
                    medians.setdefault(key, []).append(value)
        run = group.main.run
        cells = {name: run.cell_label(name) for name in run.cell_names}
        assert not drift_problems(note.text, medians, run.subject_labels, cells), note.text


@pytest.mark.parametrize("recipe", RECIPES)
def test_the_newest_run_is_on_the_first_screen_labelled(committed_site: Path, recipe: str) -> None:
    html = page(committed_site, recipe)
    newest = newest_run_of(COMMITTED_DATA, recipe)
    shown = one(html, page_run=next(e.data["page-run"] for e in tagged(html) if "page-run" in e.data))
    if shown.data["page-run"] == newest:
        assert not find(html, newest=newest)
        return
    line = one(html, newest=newest).text
    busy = ", busy: " in line
    assert busy or ", quiet: " in line
    views = {view.run.run_id: view for view in recipe_views(COMMITTED_DATA / recipe, "full")}
    assert busy == views[newest].busy


def test_the_cards_latency_range_is_each_servers_median_p99_in_its_raw_reports(committed_site: Path) -> None:
    checked = 0
    for recipe in RECIPES:
        html = page(committed_site, recipe)
        for element in find(html, recipe=recipe, beside="latency"):
            assert not beside_problems(element.text, COMMITTED_DATA / recipe / element.data["run"]), element.text
            checked += 1
    assert checked  # cherrypy-speed and cherokee-vs-apache show it


def test_a_sweep_storys_stall_is_the_raw_rounds_geometric_mean(committed_site: Path) -> None:
    html = (committed_site / "recipes" / "cherrypy-speed-releases.html").read_text()
    stories = find(html, story="sweep")
    said = [story for story in stories if " slower than " in story.text]
    assert said  # the cheroot sweep's stall
    for story in said:
        assert not stall_problems(story.text, COMMITTED_DATA / "cherrypy-speed" / story.data["run"]), story.text


# --- the wrong statements readers found, as fixtures ------------------------------------------------------------


def test_a_pick_of_http2_clients_over_h2load_h1_runs_is_caught() -> None:
    run = COMMITTED_DATA / "wsgi-servers" / "20261128T042213.334499Z-full"
    said = "For 10 clients at once, each keeping its connection open over HTTP/2: FastWSGI (111,200 req/s)."
    assert any("HTTP/2" in problem for problem in pick_problems(said, run, "h2load-c10"))
    said = "For HTTP/2 clients (not told apart): FastWSGI (111,200 req/s, 17.4 MiB at peak)."
    assert pick_problems(said, run, "h2load-c10")


def test_a_pick_by_req_s_among_figures_at_the_load_tools_limit_is_caught() -> None:
    run = COMMITTED_DATA / "wsgi-servers" / "20261128T042213.334499Z-full"
    said = "For 10 clients at once, a new connection per request: meinheld (at least 23,615 req/s, 8.2 MiB at peak)."
    assert any("load tool's limit" in problem for problem in pick_problems(said, run, "c10"))


def test_a_p99_beside_a_kind_of_client_the_open_loop_load_did_not_measure_is_caught() -> None:
    run = COMMITTED_DATA / "bottle-adapters" / "20261128T044057.579432Z-full"
    said = "For one client at a time, a new connection per request: bjoern (7,820 req/s, p99 at half load 2.39 ms)."
    assert any("p99" in problem for problem in pick_problems(said, run, "c1"))


def test_a_grey_not_settled_on_an_interval_wholly_short_of_the_claim_is_caught() -> None:
    claim = claims_of(COMMITTED_DATA, "cherokee-vs-apache")["cherokee-three-times-apache"]
    shown = "0.97 [0.82–1.15] (2 runs, 10 rounds)"
    assert machine_badge_problems(claim, "not settled", shown)
    assert card_badge_problems("not settled", [("short of the claim", shown), ("not measured", None)], claim)


def test_one_machines_badge_said_for_all_where_another_is_weaker_is_caught() -> None:
    claim = claims_of(COMMITTED_DATA, "wsgi-servers")["keepalive-doubles-wsgiboost"]
    machines = [
        ("direction as claimed", "1.46 [1.32–1.61] (2 runs, 10 rounds)"),
        ("weaker than claimed", "1.23 [1.02–1.49] (5 rounds)"),
    ]
    assert card_badge_problems("direction as claimed", machines, claim)
    assert not card_badge_problems("weaker than claimed", machines, claim)


def test_a_stall_said_at_its_weakest_bound_is_caught() -> None:
    run_dir = COMMITTED_DATA / VERSUS_RUN
    slowdowns = round_slowdowns(run_dir, "raw-wsgi-a", "raw-wsgi-b", "c10-k")
    assert min(slowdowns) > 40  # every round stalled: 12,130 against 109 req/s in the median
    assert bound_problems("1.39× slower or beyond (from 4 rounds; …), changed", slowdowns)
    assert bound_problems("1.39× slower or more in each of its 4 rounds", slowdowns)


def test_a_drift_note_that_asserts_a_cause_or_quotes_no_usual_figure_is_caught() -> None:
    said = (
        "It measured 61 % to 82 % more req/s than this machine's 3 other runs in 8 of its 8 cells, beyond every "
        "one's interval: the machine ran faster that day (a VM shares its host)."
    )
    problems = drift_problems(said, {}, {}, {})
    assert any("cause" in problem for problem in problems) and any("no figure" in problem for problem in problems)


def test_a_latency_range_with_another_servers_figure_is_caught() -> None:
    run = COMMITTED_DATA / "cherokee-vs-apache" / "20261127T124139.626853Z-full"
    said = "Offered half its capacity, a server's p99 latency ran from 593 µs (nginx (SCGI for Django)) to 900 µs "
    said += "(Apache httpd (mod_wsgi for Django)); its memory …"
    assert beside_problems(said, run) and not beside_problems(said.replace("900 µs", "792 µs"), run)


def test_a_stall_of_another_size_is_caught() -> None:
    run = COMMITTED_DATA / "cherrypy-speed" / "20261127T143946.572412Z-cheroot-sweep"
    said = (
        "From 8.1.0 to 8.3.1, the cheroot raw WSGI server stalls …; 8.1.0 is {}× slower than 8.0.0 at -c 1 -k (99.9 %"
    )
    assert not stall_problems(said.format("782"), run) and stall_problems(said.format("509"), run)


def test_a_home_page_count_that_disagrees_with_the_cards_is_caught() -> None:
    assert tally_problems("1 of 1 not settled", ["short of the claim"])
