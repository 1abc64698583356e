"""The real recipe against the real servers and the real ab, then the real docs build."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from html import unescape
from importlib import metadata
from pathlib import Path

import psutil
import pytest
from pages import find, one

from benchsite.harness.builds.byo import search_path
from benchsite.harness.experiments.faults import listening_ports
from benchsite.harness.processes.processes import port_is_free
from benchsite.model.run import RunDocument
from benchsite.results.claims import State
from benchsite.results.claims.base import Badge
from benchsite.results.intervals import level_label
from benchsite.results.machines import DECIDED, ClaimAcross, MachineRuns, by_machine
from benchsite.results.metrics import METRICS, RPS
from benchsite.results.newest import alone
from benchsite.results.published import load_published
from benchsite.results.stats import summarize
from benchsite.results.store import list_runs, load_run, recipe_views
from benchsite.results.view import RunView
from benchsite.results.work import work_ratio
from benchsite.sphinxext.answer import every_machine, shown_estimate
from benchsite.sphinxext.results import fmt_median_interval
from benchsite.tools import AnyCellRun, parse_report
from committed import COMMITTED_DATA
from conftest import INTERRUPTED_LINE, INVOKE, REPO, SiteBuild, processes_mentioning, run_invoke

pytestmark = pytest.mark.integration

SERVER_CPU, LOAD_CPU = METRICS["server-cpu"], METRICS["load-cpu"]

RECIPE = "cherrypy-speed"
PAGE = Path("recipes") / f"{RECIPE}.html"
RECIPES = ("cherrypy-speed", "bottle-adapters", "wsgi-servers", "http-clients", "cherokee-vs-apache")


@dataclass(frozen=True)
class Site:
    """A copy of data/ with one new quick run of every recipe, and the site built from it."""

    data_dir: Path
    html_dir: Path
    runs: dict[str, RunDocument]
    said: dict[str, str]  # what each run printed (its progress and its verdicts), 200 columns wide
    build: subprocess.CompletedProcess


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """Quick runs against the real servers and the real load tools (never into data/ itself)."""
    root = tmp_path_factory.mktemp("site")
    data_dir = root / "data"
    shutil.copytree(COMMITTED_DATA, data_dir, ignore=shutil.ignore_patterns("*-quick"))  # as committed
    runs, said = {}, {}
    for recipe in RECIPES:
        committed = list_runs(data_dir / recipe)
        result = run_invoke("recipe", recipe, "--profile", "quick", "--data-dir", str(data_dir), env={"COLUMNS": "200"})
        assert result.returncode == 0, result.stderr
        [run_dir] = [run for run in list_runs(data_dir / recipe) if run not in committed]
        assert run_dir == list_runs(data_dir / recipe)[-1]  # the newest run is the one the page shows
        runs[recipe], said[recipe] = load_run(run_dir), result.stderr
    build = run_invoke("docs", "--output", str(root / "html"), "--data-dir", str(data_dir), "--profile", "quick")
    return Site(data_dir, root / "html", runs, said, build)


@pytest.fixture(scope="module")
def quick_run(site: Site) -> RunDocument:
    return site.runs[RECIPE]


def worked(cell: AnyCellRun) -> bool:
    """Its one repetition ran and every request got its answer (on a busy machine it may also be marked
    disturbed: left out of the figures, which is not a failure of the run)."""
    return len(cell.repetitions) == 1 and cell.repetitions[0].ok and not summarize(cell).problems


def test_the_quick_run_measures_both_subjects_in_all_four_cells(quick_run: RunDocument) -> None:
    assert [s.name for s in quick_run.subjects] == ["framework", "raw-wsgi"]
    for subject in quick_run.subjects:
        assert [c.name for c in subject.cells] == ["c1", "c1-k", "c10", "c10-k"]
        assert subject.verification is not None
        assert subject.verification.status == 200 and subject.verification.body == "OK"
        for cell in subject.cells:
            [rep] = cell.repetitions
            assert worked(cell), summarize(cell).failure_reasons
            assert SERVER_CPU.read(rep) > 0
            assert summarize(cell).keepalive_honoured is (True if cell.keepalive else None)
    assert quick_run.subject("framework").server_software.startswith("CherryPy/")
    assert quick_run.subject("raw-wsgi").server_software.startswith("Cheroot/")


@pytest.mark.parametrize("recipe", RECIPES)
def test_parsed_values_equal_the_raw_output_files(site: Site, recipe: str) -> None:
    run = site.runs[recipe]
    for subject in run.subjects:
        for cell in subject.cells:
            for rep in cell.repetitions:
                assert rep.result == parse_report(cell.tool, run.raw_text(rep))
                if cell.tool == "ab":
                    assert rep.result.complete_requests == cell.requests
                    assert rep.argv[-1].startswith("http://127.0.0.1:")


def test_every_bottle_adapter_that_installs_answers_and_the_others_say_why(site: Site) -> None:
    run = site.runs["bottle-adapters"]
    assert {s.name for s in run.subjects} >= {
        "wsgiref",
        "paste",
        "cheroot",
        "tornado",
        "waitress",
        "gunicorn",
        "twisted",
        "bjoern",
        "meinheld",
        "gevent",
        "eventlet",
    }
    for subject in run.subjects:
        assert subject.verification.body == "Hello World"
        assert all(not summarize(cell).problems for cell in subject.cells), subject.name
    skipped = {s.name: s for s in run.skipped}
    assert "cherrypy.wsgiserver" in skipped["cherrypy"].detail and "cheroot" in skipped["cherrypy"].reason
    if importable("fapws._evwsgi"):  # built by `invoke byo fapws3`, as the README's set-up does
        fapws3 = run.subject("fapws3")
        assert fapws3.server_software == "fapws3/0.11" and fapws3.verification.body == "Hello World"
        [origin] = fapws3.origins
        assert origin.build is not None and "fapws3-python3.patch" in origin.build
        assert origin.path.startswith("{site_packages}/fapws/_evwsgi")
    else:
        assert "invoke byo fapws3" in skipped["fapws3"].reason
    assert run.subject("bjoern").origins[0].version == f"bjoern {metadata.version('bjoern')}"


def test_the_wsgi_servers_run_has_the_ceiling_and_wrk_cells(site: Site) -> None:
    run = site.runs["wsgi-servers"]
    assert run.ceiling is not None and run.ceiling.server_software.startswith("nginx/")
    for subject in run.subjects:
        assert subject.verification.body == "Hello World!"
        wrk_cell = subject.cell("wrk-c10")
        assert wrk_cell is not None and wrk_cell.repetitions[0].ok and RPS.read(wrk_cell.repetitions[0]) > 0
    assert ("wsgiboost" in {s.name for s in run.skipped}) is not importable("wsgi_boost")
    assert (run.path / "configs" / "nginx" / "nginx.conf").read_text().count("listen 127.0.0.1:") == 1


def test_every_client_reports_its_own_cpu_against_the_pinned_api(site: Site) -> None:
    run = site.runs["http-clients"]
    assert run.subject("api").role == "backend" and run.subject("api").server_software.startswith("nginx/")
    clients = {s.name for s in run.measured}
    assert {
        "pycurl-reuse-discard",
        "requests-reuse",
        "requests-noreuse",
        "urllib3-reuse",
        "urllib-noreuse",
        "httpx-reuse",
        "aiohttp-noreuse",
    } <= clients
    for subject in run.measured:
        for cell in subject.cells:
            assert worked(cell), (subject.name, summarize(cell).failure_reasons)
            rep = cell.repetitions[0]
            assert rep.result.complete_requests == cell.requests
            assert rep.result.bytes_received == rep.result.complete_requests * int(cell.name.split("-")[1])
            assert LOAD_CPU.read(rep) == rep.result.cpu_us_per_request > 0
            assert rep.argv[4].startswith(("http://127.0.0.1:", "https://127.0.0.1:"))
    assert run.subject("pycurl-reuse-buffer").cell("http-131072") is not None


def test_apache_nginx_and_lighttpd_serve_the_three_cases_from_private_instances(site: Site) -> None:
    run = site.runs["cherokee-vs-apache"]
    servers = {s.name: s for s in run.measured}
    cherokee_here = shutil.which("cherokee", path=search_path(REPO)) is not None  # on PATH or `invoke byo cherokee`
    assert set(servers) == {"apache", "nginx", "lighttpd"} | ({"cherokee"} if cherokee_here else set())
    assert "mod_wsgi" in servers["apache"].server_software
    for subject in servers.values():
        for cell in subject.cells:
            assert worked(cell), (subject.name, summarize(cell).failure_reasons)
        static = subject.cell("static").repetitions[0].result
        assert static.html_transferred_bytes == 67859 * static.complete_requests
        feed = subject.cell("feed").repetitions[0]
        assert "-l" in feed.argv and feed.argv[-1].endswith("/feeds/")
        assert 13000 < feed.result.html_transferred_bytes / feed.result.complete_requests < 14500
        scgi = subject.cell("scgi").repetitions[0].result
        assert scgi.html_transferred_bytes == 693 * scgi.complete_requests
    assert subject_backend_cpu(run, "nginx", "feed", "django-scgi") > 0
    assert subject_backend_cpu(run, "nginx", "scgi", "hello-scgi") > 0
    assert [s.name for s in run.skipped] == ([] if cherokee_here else ["cherokee"])
    assert servers["nginx"].origins[0].version.startswith("Debian package nginx")
    for name in ("apache", "nginx", "lighttpd"):
        assert (run.path / "configs" / name).is_dir()
    assert processes_mentioning(str(Path(tempfile.gettempdir()) / "benchsite-")) == []  # no private instance left


def importable(module: str) -> bool:
    """Whether the project's Python imports a module (a subject that needs it runs, else it is skipped)."""
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def subject_backend_cpu(run: RunDocument, subject: str, cell: str, backend: str) -> float:
    return run.subject(subject).cell(cell).repetitions[0].backend_cpu_s[backend]


def test_the_run_records_machine_versions_pinning_and_commands(quick_run: RunDocument) -> None:
    env = quick_run.environment
    assert env.tools["ab"].startswith("This is ApacheBench, Version 2.3")
    assert env.packages["CherryPy"][0].isdigit() and env.packages["cheroot"][0].isdigit()
    assert env.cpu_count is not None and env.cpu_count >= 1 and env.python.startswith("CPython")
    if len(psutil.Process().cpu_affinity()) >= 2:
        assert (quick_run.settings.server_cpu, quick_run.settings.load_cpu) == (0, 1)
    assert quick_run.subject("framework").argv[1] == "framework_app.py"


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_page_shows_its_runs_values_and_charts(site: Site, recipe: str) -> None:
    assert site.build.returncode == 0, site.build.stdout[-2000:] + site.build.stderr
    run = site.runs[recipe]
    html = (site.html_dir / "recipes" / f"{recipe}.html").read_text()
    assert run.run_id in html
    results = one(html, table="results", recipe=recipe)
    for subject in run.subjects:
        for cell in subject.cells:
            summary = summarize(cell)
            figure = dict(subject=subject.name, cell=cell.name)
            assert results.one(**figure, metric="rps", part="median").text == RPS.fmt(summary.median())
            assert results.one(**figure, part="interval").text == fmt_median_interval(summary.interval())
            shown_cpu = results.one(**figure, metric="server-cpu").text
            assert shown_cpu == SERVER_CPU.fmt(summary.median(SERVER_CPU))
            assert f'href="#bench-raw-{recipe}-{subject.name}-{cell.name}"' in html or (
                f"raw/{recipe}.html#bench-raw-{recipe}-{subject.name}-{cell.name}" in html
            )
    for skipped in run.skipped:
        assert results.one(subject=skipped.name, status="skipped").text.startswith(f"DID NOT RUN: {skipped.reason}")
    charts = re.findall(r'<img src="\.\./_images/(bench-[0-9a-f]{16}\.svg)" alt="([^"]+)"', html)
    assert len(charts) >= 2
    for name, alt in charts:
        assert (site.html_dir / "_images" / name).stat().st_size > 1000
        assert f'<a href="../_images/{name}"' in html  # each chart links to its full-size SVG
        assert len(unescape(alt)) <= 300
        assert (
            unescape(alt).startswith("Forest plot")
            or any(subject.label in unescape(alt) for subject in run.measured)
            or "every value is in the table below it" in unescape(alt)  # a release sweep's charts
            or "subjects; every value is in the results table" in unescape(alt)
        )
    published = load_published(site.data_dir / recipe / "published.toml")
    claims = one(html, table="claims", recipe=recipe)
    for across in published.across(by_machine([RunView(run)])):  # the quick site: one quick run a recipe
        shown = claims.one(claim=across.claim.id, scope="all", state=across.state)
        assert shown.text == across.state.value  # the rule's answer, beside the badge
        assert claims.one(claim=across.claim.id, scope="all", badge=across.badge).text == across.badge.upper()


def test_the_clients_page_sets_todays_figures_beside_the_originals(site: Site) -> None:
    run = site.runs["http-clients"]
    html = (site.html_dir / "recipes" / "http-clients.html").read_text()
    pivot = one(html, table="pivot", recipe="http-clients", metric="rps")
    requests_reuse = run.subject("requests-reuse")
    today = {
        cell: pivot.one(subject=requests_reuse.name, cell=cell, source="today") for cell in ("http-1024", "https-1024")
    }
    view = RunView(run)
    for cell, shown in today.items():  # the median; on a busy machine a flagged figure carries its mark
        figure = view.figure(requests_reuse.name, cell)
        summary = summarize(requests_reuse.cell(cell))
        lower = summary.at_least_rps() if summary.median() is None and not summary.problems else None
        expected = RPS.fmt(summary.median()) if lower is None else f"at least {lower:,.0f}, busy"  # all disturbed
        assert figure is not None and shown.text.removesuffix(" ⚑") == expected
        flagged = not figure.usable and lower is None  # a busy lower bound says so in words, without the mark
        assert shown.text.endswith(" ⚑") == flagged, (shown.text, figure.flags)
    assert pivot.one(subject=requests_reuse.name, cell="http-1024", source="published").text == "1,071"  # 1070.68
    assert pivot.one(subject=requests_reuse.name, cell="https-1024", source="published").text == "1,009"


def test_the_raw_listings_hold_the_tools_output_verbatim(site: Site) -> None:
    run = site.runs[RECIPE]
    html = unescape((site.html_dir / PAGE).read_text())
    for subject in run.subjects:
        for cell in subject.cells:
            line = next(
                line
                for line in run.raw_text(cell.repetitions[0]).splitlines()
                if line.startswith("Requests per second")
            )
            assert line in html
    assert "Test 7" in html and "1,008.08" in html  # the published figures, parsed from the seed's report


def shown_and_machines(recipe: str) -> tuple[RunDocument, list[MachineRuns], list[ClaimAcross]]:
    """What a page of the committed site shows: its reference machine's best-evidenced full run; its verdicts."""
    published = load_published(COMMITTED_DATA / recipe / "published.toml")
    groups = by_machine(recipe_views(COMMITTED_DATA / recipe, "full"), published.reference_machine)
    return groups[0].main.run, groups, published.across(groups)


def test_the_docs_build_says_little_and_warns_of_nothing(committed_build: SiteBuild) -> None:
    assert not [line for line in committed_build.said if "WARNING" in line or "ERROR" in line]
    assert len(committed_build.said) <= 30, committed_build.said  # a warning would not drown in progress lines
    assert committed_build.said[-1].startswith("built the site in ")


CODE = re.compile(r'<div class="highlight.*?</div>', re.DOTALL)  # a listing of an app's source may say ImportError


def test_no_page_shows_an_exception_name(committed_site: Path) -> None:
    shown = {
        page.relative_to(committed_site): found
        for page in committed_site.rglob("*.html")
        for found in re.findall(r"\b\w+(?:Error|Exception)\b", unescape(re.sub(CODE, "", page.read_text())))
    }
    assert shown == {}


@pytest.mark.parametrize("recipe", RECIPES)
def test_the_site_builds_from_the_committed_full_runs_alone(committed_site: Path, recipe: str) -> None:
    committed, _, _ = shown_and_machines(recipe)
    assert committed.profile.name == "full"
    html = unescape((committed_site / "recipes" / f"{recipe}.html").read_text())
    assert committed.run_id in html
    results = one(html, table="results", recipe=recipe)
    for subject in committed.subjects:
        for cell in subject.cells:
            shown = results.one(subject=subject.name, cell=cell.name, metric="rps", part="median")
            assert shown.text == RPS.fmt(summarize(cell).median())
            interval = summarize(cell).interval()
            labelled = results.one(subject=subject.name, cell=cell.name, metric="rps", part="interval").text
            if interval is not None and interval.low is not None:  # each interval says its own level
                assert labelled.endswith(f"] {level_label(interval.level)}"), labelled
    levels = {summarize(c).interval().level for s in committed.subjects for c in s.cells if len(c.repetitions) > 1}
    if max(levels) < 0.95:  # no median interval of this run reaches 95 %: the page never says it does
        plain = re.sub(r"<[^>]+>", " ", html)
        for said in ("95 % interval)", "its 95 % interval in brackets", "whiskers: 95 %", "distribution-free 95 %"):
            assert said not in plain, said


def test_the_front_page_counts_each_pages_verdicts(committed_site: Path) -> None:
    html = (committed_site / "index.html").read_text()
    for recipe in RECIPES:
        _, _, decided = shown_and_machines(recipe)
        counts = {badge: sum(claim.badge == badge for claim in decided) for badge in Badge}
        found = one(html, recipe=recipe, tally="verdicts")
        parts = [f"{count} {badge.value}" for badge, count in counts.items() if count]
        number, _, rest = parts[0].partition(" ")
        assert found.text == ", ".join([f"{number} of {len(decided)} {rest}", *parts[1:]])  # "2 of 6 as claimed, ..."
        most = max(counts.values())
        assert counts[Badge(found.data["badge"])] == most  # coloured by the badge most share
    verdict_page = unescape((committed_site / "verdicts.html").read_text())
    assert verdict_page.count("COULD NOT RUN") >= 1 and "Fapws3" in verdict_page
    every = [claim.state for recipe in RECIPES for claim in shown_and_machines(recipe)[2]]
    tally = ", ".join(state.counted(every.count(state)) for state in State if every.count(state))
    assert one(verdict_page, tally="all-verdicts").text == f"{len(every)} conclusions: {tally}."
    for page in committed_site.rglob("*.html"):  # no count disagrees with its verb anywhere ("1 of 6 holds" agrees)
        assert not re.search(
            r"(?<!of )\b(?:[2-9]|\d\d+) (?:holds|does not hold|depends on)\b", unescape(page.read_text())
        ), page


def test_a_run_ends_with_its_verdicts_in_the_terminal(site: Site) -> None:
    said, run = site.said[RECIPE], site.runs[RECIPE]
    published = load_published(COMMITTED_DATA / RECIPE / "published.toml")
    assert (f"This run alone ({run.machine.name})" in said and "the page pools it" in said) or "busy machine" in said
    for verdict in alone(RunView(run), published):  # the page's words; the table may fold a long one
        assert verdict.claim.id in said and all(word in said for word in verdict.today.split())
        assert all(word in said for word in verdict.badge.upper().split())
    assert said.rstrip().splitlines()[-1].startswith("wrote ")


def test_ctrl_c_mid_run_stops_every_server_and_keeps_no_run(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    process = subprocess.Popen(
        [*INVOKE, "recipe", RECIPE, "--profile", "full", "--data-dir", str(data_dir)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        for line in process.stderr:  # wait until load is running
            if "round 1:" in line:
                break
        children = psutil.Process(process.pid).children(recursive=True)
        ports = sorted(listening_ports({child.pid for child in children}))
        assert len(ports) == 2
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert INTERRUPTED_LINE.search(stderr), stderr
    assert "Traceback" not in stderr
    assert not any(child.is_running() and child.status() != psutil.STATUS_ZOMBIE for child in children)
    assert all(port_is_free(port) for port in ports)
    assert not (data_dir / RECIPE).exists()  # its first run, interrupted: no folder left at all


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_recipe_page_opens_with_its_answer_the_same_verdicts_as_its_claims_table(
    committed_site: Path, recipe: str
) -> None:
    html = unescape((committed_site / "recipes" / f"{recipe}.html").read_text())
    _, _, decided = shown_and_machines(recipe)
    assert html.index('class="bench-answer') < html.index('id="the-question"')  # above "The question"
    for claim in decided:
        answer = one(html, recipe=recipe, claim=claim.claim.id, scope="answer", badge=claim.badge)
        table = one(html, recipe=recipe, claim=claim.claim.id, scope="all", badge=claim.badge)
        assert answer.text == table.text and answer.text.startswith(claim.badge.upper())
        assert answer.data["state"] == claim.state  # the rule's state, kept on the card's badge
        first = list(claim.deciding)
        assert {m.verdict.state for m in first} <= ({claim.state} if claim.state in DECIDED else set(State))
        shown = every_machine(claim)
        assert shown[: len(first)] == first and len(shown) == len(claim.machines)  # every machine, deciders first
        for machine in shown:  # its state and its numbers
            tag = {"recipe": recipe, "claim": claim.claim.id, "machine": machine.runs.key}
            assert one(html, verdict="machine", **tag).text == machine.verdict.badge.value
            estimate = find(html, estimate="answer", **tag)
            expected = shown_estimate(machine)
            assert [e.text for e in estimate] == ([] if expected is None else [expected])
            found = machine.verdict.estimate
            if expected is not None and found is not None and found.bounded:  # the interval the verdict rests on
                numbers = [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*\.\d+", expected)][:3]
                assert numbers == pytest.approx([found.value, found.low, found.high], abs=0.0051), expected
        assert f'href="#claim-{claim.claim.id}"' in html and f'id="claim-{claim.claim.id}"' in html


def test_the_cherrypy_answer_says_why_from_the_counted_instructions(committed_site: Path) -> None:
    html = unescape((committed_site / "recipes" / "cherrypy-speed.html").read_text())
    _, groups, _ = shown_and_machines("cherrypy-speed")
    counted = [v for v in groups[0].views if v.run.counting is not None and v.run.counting.counts][-1]
    ratio = work_ratio(counted, "framework", "raw-wsgi", "c1")
    assert ratio is not None
    said = f"executes {ratio.instructions:.2f}× the instructions of the Raw WSGI server"
    assert html.count(said) >= 2  # the two claims of raw ÷ framework, at -c 1 and -c 10 (counted at -c 1)
