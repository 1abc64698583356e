"""The extension on a tiny Sphinx project: one page, one committed run, one directive at a time.

Each test builds a one-page site in-process (sphinx.testing) from a copy of one committed run of
cherrypy-speed and its published.toml, and checks what the directive writes, its options, and the
one warning a bad option or bad data gives. Whole-site builds are left to test_end_to_end.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from html import unescape
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from pages import find, one
from tiny_site import build

from benchsite.errors import BenchError
from benchsite.model.columns import read_form
from benchsite.results.machines import by_machine
from benchsite.results.metrics import METRICS, RPS
from benchsite.results.published import load_published
from benchsite.results.stats import summarize
from benchsite.results.store import list_runs, load_run, load_view, recipe_views
from benchsite.results.view import RunView
from benchsite.sphinxext.nodes import FLAG, FLAG_IN_PRINT, RAW_IN_PRINT
from benchsite.sphinxext.results import BenchResults
from committed import COMMITTED_DATA

RECIPE = "cherrypy-speed"
RUN = COMMITTED_DATA / RECIPE / "20261123T071248.420032Z-full"  # pinned by its id


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data folder with one full run of cherrypy-speed and its published figures."""
    target = tmp_path / "data" / RECIPE
    assert RUN is not None
    shutil.copytree(RUN, target / RUN.name)
    shutil.copy(COMMITTED_DATA / RECIPE / "published.toml", target / "published.toml")
    shutil.copytree(COMMITTED_DATA / RECIPE / "published", target / "published")
    return tmp_path / "data"


def test_results_show_each_cells_median_and_link_downloads(tmp_path: Path, data_dir: Path) -> None:
    built = build(tmp_path, f".. bench-results:: {RECIPE}\n\n.. bench-raw:: {RECIPE}\n")  # medians link to raw
    assert not built.warnings
    view = load_view(RUN)
    run = view.run
    assert find(built.html, table="results", recipe=RECIPE)
    for subject in run.subjects:
        for cell in subject.cells:
            summary = summarize(cell)
            figure = dict(recipe=RECIPE, subject=subject.name, cell=cell.name)
            assert one(built.html, **figure, metric="rps", part="median").text == RPS.fmt(summary.median())
            for metric in (m for m in METRICS.values() if m.tabled):  # the columns come from the registry
                assert one(built.html, **figure, metric=metric.name).text == metric.fmt(summary.median(metric))
            assert one(built.html, **figure, status="figure").text == view.figure(subject.name, cell.name).status
    csv_link = f"_data/{RECIPE}/{run.run_id}.csv"
    assert f'href="{csv_link}"' in built.html and (built.outdir / csv_link).is_file()
    assert json.loads((built.outdir / f"_data/{RECIPE}/{run.run_id}.json").read_text())["run_id"] == run.run_id


def test_a_page_level_recipe_serves_every_directive_below_it(tmp_path: Path, data_dir: Path) -> None:
    built = build(tmp_path, f".. bench-recipe:: {RECIPE}\n\n.. bench-subjects::\n\n.. bench-commands::\n")
    assert not built.warnings
    assert "CherryPy/" in built.text and "ab -s" in built.text


def test_a_directive_without_a_recipe_says_how_to_name_one(tmp_path: Path, data_dir: Path) -> None:
    built = build(tmp_path, ".. bench-results::\n")
    assert len(built.warnings) == 1
    assert (
        "bench-results: which recipe? Name it, or put `.. bench-recipe:: NAME` above on the page" in (built.warnings[0])
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (".. bench-results:: nope\n", "no run of recipe 'nope'"),
        (f".. bench-results:: {RECIPE}\n   :cells: c2\n", "c2"),
        (f".. bench-chart:: {RECIPE}\n   :subjects: nobody\n", "nobody"),
        (f".. bench-results:: {RECIPE}\n   :run: 20200101T000000Z-full\n", "no such run of 'cherrypy-speed'"),
    ],
)
def test_bad_options_are_one_warning_naming_the_problem(
    tmp_path: Path, data_dir: Path, body: str, expected: str
) -> None:
    built = build(tmp_path, body)
    assert len(built.warnings) == 1 and expected in built.warnings[0], built.warnings
    assert "Traceback" not in built.warnings[0]


def test_a_damaged_run_is_one_warning_naming_its_file(tmp_path: Path, data_dir: Path) -> None:
    run_file = data_dir / RECIPE / RUN.name / "run.json"
    document = read_form(json.loads(run_file.read_text()))  # its repetitions as rows
    document["subjects"][0]["cells"][0]["repetitions"][0]["wall_s"] = "fast"
    run_file.write_text(json.dumps(document))
    built = build(tmp_path, f".. bench-results:: {RECIPE}\n")
    assert len(built.warnings) == 1 and "run.json" in built.warnings[0] and "wall_s" in built.warnings[0]


def test_claims_show_a_verdict_for_each_published_conclusion(tmp_path: Path, data_dir: Path) -> None:
    built = build(tmp_path, f".. bench-claims:: {RECIPE}\n")
    assert not built.warnings
    published = load_published(data_dir / RECIPE / "published.toml")
    groups = by_machine(recipe_views(data_dir / RECIPE, "full"), published.reference_machine)
    assert find(built.html, table="claims", recipe=RECIPE)
    for across in published.across(groups):
        claim = across.claim.id
        shown = one(built.html, recipe=RECIPE, claim=claim, scope="all", state=across.state)
        assert shown.text == across.state.value  # the rule's answer, beside the badge that says what happened
        badge = one(built.html, recipe=RECIPE, claim=claim, scope="all", badge=across.badge)
        assert badge.text == across.badge.upper()
        for found in across.machines:
            where = dict(recipe=RECIPE, claim=claim, scope="machine", machine=found.runs.label)
            assert one(built.html, **where, state=found.verdict.state).text == found.verdict.state.upper()
            assert one(built.html, **where, estimate="pooled").text == found.verdict.today
    overall = [e for e in find(built.html, recipe=RECIPE, scope="all") if "state" in e.data]
    assert len(overall) == len(published.claims) > 0
    assert "Original conclusion" in built.text


def test_a_page_with_its_own_claims_has_no_published_column(tmp_path: Path, data_dir: Path) -> None:
    published = data_dir / RECIPE / "published.toml"
    published.write_text(
        'format_version = 1\nsource = "This page\'s own claims"\n\n[[claims]]\nid = "ten-beat-one"\n'
        'text = "Ten clients beat one."\nkind = "ratio"\nnumerator = ["framework", "c10"]\n'
        'denominator = ["framework", "c1"]\nat_least = 1.0\n'
    )
    built = build(tmp_path, f".. bench-claims:: {RECIPE}\n")
    assert not built.warnings
    assert "This page's claim" in built.text and "Original conclusion" not in built.text
    assert "Published" not in built.text and "Conclusion 1 of the card" in built.text  # the card says the claim


def test_a_chart_is_an_svg_with_its_values_in_the_alt_text(tmp_path: Path, data_dir: Path) -> None:
    built = build(tmp_path, f".. bench-chart:: {RECIPE}\n   :cells: c1\n")
    assert not built.warnings
    [(src, alt)] = re.findall(r'<img src="(_images/bench-[0-9a-f]{16}\.svg)" alt="([^"]+)"', built.html)
    assert (built.outdir / src).read_text().startswith("<?xml")
    run = load_run(RUN)
    for subject in run.subjects:
        assert f"{RPS.fmt(summarize(subject.cell('c1')).median())} req/s" in unescape(alt)


def test_many_subjects_get_sorted_horizontal_bars(tmp_path: Path, data_dir: Path) -> None:
    built = build(tmp_path, f".. bench-chart:: {RECIPE}\n   :kind: hbar\n")
    assert not built.warnings and "Sorted bar chart" in built.html


def test_details_collapse_on_the_web_and_show_in_text(tmp_path: Path, data_dir: Path) -> None:
    body = ".. bench-details:: The code\n\n   Hidden until opened.\n"
    html = build(tmp_path, body)
    assert '<details class="bench-details"><summary>The code</summary>' in html.html
    text = build(tmp_path / "t", body, builder="text")
    assert "Hidden until opened." in (text.outdir / "index.txt").read_text()


def test_non_html_builders_get_the_chart_as_a_pdf_image(tmp_path: Path, data_dir: Path) -> None:
    built = build(tmp_path, f".. bench-chart:: {RECIPE}\n", builder="latex")
    assert not built.warnings
    [pdf] = (built.outdir / "bench-charts").glob("bench-*.pdf")
    assert pdf.read_bytes().startswith(b"%PDF")
    tex = next(built.outdir.glob("*.tex")).read_text()
    assert f"bench-charts/{pdf.stem}" in tex and "sphinxincludegraphics" in tex


def test_the_pdf_builder_draws_the_charts_into_the_pdf(tmp_path: Path, data_dir: Path) -> None:
    body = f".. bench-chart:: {RECIPE}\n\n.. bench-details:: The code\n\n   Shown in the PDF.\n"
    built = build(tmp_path, body, builder="rinoh", extensions=("rinoh.frontend.sphinx",))
    assert not [w for w in built.warnings if "bench" in w], built.warnings
    pdf = (built.outdir / "tiny.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Subtype /Form") >= 1  # the chart, embedded as vector art


LONG_COMMAND = (
    "$ .venv/bin/invoke versus cherrypy-speed -a CherryPy==18.9.0,cheroot==10.0.1 -b CherryPy==18.10.0,cheroot==11.1.2 "
    "--subjects framework,raw-wsgi --profile versus --data-dir data/experiments/versus --machine my-laptop"
)


def test_a_code_line_too_long_for_print_breaks_between_words_with_a_shells_backslash() -> None:
    from benchsite.sphinxext.nodes import PRINT_COLUMNS, wrapped_for_print

    wrapped = wrapped_for_print(f"   {LONG_COMMAND}\nshort", " \\").splitlines()
    assert all(len(line) <= PRINT_COLUMNS for line in wrapped) and wrapped[-1] == "short"
    assert all(line.endswith(" \\") for line in wrapped[:-2]) and wrapped[1].startswith("       ")
    assert " ".join(line.removesuffix(" \\").strip() for line in wrapped[:-1]) == LONG_COMMAND


def test_the_pdf_prints_a_long_command_whole_broken_between_words(tmp_path: Path, data_dir: Path) -> None:
    from pypdf import PdfReader

    body = f"Run it:\n\n.. code-block:: console\n\n   {LONG_COMMAND}\n"
    built = build(tmp_path, body, builder="rinoh", extensions=("rinoh.frontend.sphinx",))
    assert not [w for w in built.warnings if "bench" in w], built.warnings
    text = "\n".join(page.extract_text() for page in PdfReader(built.outdir / "tiny.pdf").pages)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.startswith("$ .venv/bin/invoke versus"))
    printed = []
    for line in lines[start:]:
        printed.append(line.removesuffix("\\").strip())
        if not line.endswith("\\"):
            break
    assert len(printed) > 1 and " ".join(printed) == LONG_COMMAND  # every word, whole, in order


def test_a_word_wider_than_the_printed_page_fails_the_pdf_in_one_line(tmp_path: Path) -> None:
    from benchsite.commands.pdf import build_pdf

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "conf.py").write_text(
        "extensions = ['rinoh.frontend.sphinx']\n"
        "rinoh_documents = [{'doc': 'index', 'target': 'benchmarks', 'title': 'Tiny'}]\n"
    )
    word = "print_" + "x" * 120
    (docs / "index.rst").write_text(f"Test page\n=========\n\n.. code-block:: python\n\n   {word}()\n")
    with pytest.raises(BenchError) as raised:
        build_pdf(docs, tmp_path / "pdf")
    said = str(raised.value)
    assert "past the margin" in said and "item too long to fit on line" in said and "\n" not in said
    assert "break that line in its source" in said


def test_a_printed_page_keeps_every_cell_of_a_wide_table_and_points_to_the_raw_outputs(
    tmp_path: Path, data_dir: Path
) -> None:
    body = f".. bench-results:: {RECIPE}\n\n.. bench-raw:: {RECIPE}\n"
    assert "Requests per second:" in build(tmp_path, body).text  # the web page shows the listings
    printed = build(tmp_path, body, builder="xml")  # neither HTML nor text: laid out as for the PDF
    assert not printed.warnings, printed.warnings
    xml = unescape((printed.outdir / "index.xml").read_text())
    assert "<table" not in xml and "Requests per second:" not in xml and RAW_IN_PRINT in xml
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", xml))
    for header in BenchResults.headers[1:]:
        assert f"{header} " in text, header
    for subject in load_view(RUN).run.subjects:
        for cell in subject.cells:
            summary = summarize(cell)
            row = f"{subject.label}: Load {cell.label} · {RPS.column} {RPS.fmt(summary.median())} · "
            assert row in text, row


def test_a_run_file_that_is_not_json_is_one_warning_naming_it(tmp_path: Path, data_dir: Path) -> None:
    run_file = data_dir / RECIPE / RUN.name / "run.json"
    run_file.write_text("{broken")
    built = build(tmp_path, f".. bench-results:: {RECIPE}\n")
    assert len(built.warnings) == 1 and f"{run_file}: not valid JSON" in built.warnings[0]
    assert "Traceback" not in built.warnings[0]


def test_a_claim_naming_an_unknown_cell_is_one_warning_naming_the_file(tmp_path: Path, data_dir: Path) -> None:
    published = data_dir / RECIPE / "published.toml"
    text = published.read_text().replace('numerator = ["raw-wsgi", "c1"]', 'numerator = ["raw-wsgi", "c2"]', 1)
    published.write_text(text)
    built = build(tmp_path, f".. bench-claims:: {RECIPE}\n")
    expected = f"{published}: claim 'raw-beats-framework-c1' names unknown cell c2: I know about c1, c1-k"
    assert len(built.warnings) == 1 and expected in built.warnings[0], built.warnings


def test_a_hostile_run_is_a_warning_and_publishes_no_file_outside_the_data(tmp_path: Path, data_dir: Path) -> None:
    run_file = data_dir / RECIPE / RUN.name / "run.json"
    document = read_form(json.loads(run_file.read_text()))  # its repetitions as rows
    document["subjects"][0]["cells"][0]["repetitions"][0]["raw_output"] = "../../../../../../etc/passwd"
    run_file.write_text(json.dumps(document))
    built = build(tmp_path, f".. bench-raw:: {RECIPE}\n\n.. bench-results:: {RECIPE}\n")
    assert built.warnings and all(
        f"{run_file}: subjects[0].cells[0].repetitions[0].raw_output" in w for w in built.warnings
    )
    published = "".join(path.read_text(errors="replace") for path in built.outdir.rglob("*") if path.is_file())
    assert "root:x:0:0" not in published


def latest_of(recipe_dir: Path, across_hosts: bool, machine: str | None = None) -> Path:
    """The newest committed full run made on one machine, or across two hosts (of that machine, where given)."""
    runs = [
        path
        for path in list_runs(recipe_dir, "full")
        if (load_run(path).topology is not None) == across_hosts and machine in (None, load_run(path).machine.id)
    ]
    assert runs, f"no committed full run of {recipe_dir.name} {'across two hosts' if across_hosts else 'here'}"
    return runs[-1]


def test_a_two_host_run_beside_a_one_machine_run_shows_both_medians_and_the_change(tmp_path: Path) -> None:
    source = COMMITTED_DATA / RECIPE
    across = latest_of(source, across_hosts=True)
    here = latest_of(source, across_hosts=False, machine=load_run(across).machine.id)
    for run in (here, across):
        shutil.copytree(run, tmp_path / "data" / RECIPE / run.name)
    body = f".. bench-topology:: {RECIPE}\n\n.. bench-environment:: {RECIPE}\n   :run: {across.name}\n"
    built = build(tmp_path, body)
    assert not built.warnings
    run_one, run_two = load_run(here), load_run(across)
    assert run_two.topology is not None
    for subject in run_two.subjects:
        for cell in subject.cells:
            figure = dict(recipe=RECIPE, subject=subject.name, cell=cell.name, metric="rps")
            for run in (run_one, run_two):
                values = RunView(run).round_values(subject.name, cell.name, usable_only=False)
                mean = float(np.exp(np.mean(np.log(list(values.values())))))
                assert one(built.html, **figure, run=run.run_id).text == RPS.fmt(mean)
    assert f"servers on {run_two.topology.server.machine.name} (machine {run_two.machine.id})" in built.text
    assert "changed where it excludes 1" in built.text and "Kernel (load host)" in built.text


def test_without_a_two_host_run_the_topology_table_says_how_to_make_one(tmp_path: Path, data_dir: Path) -> None:
    built = build(tmp_path, f".. bench-topology:: {RECIPE}\n")
    assert not built.warnings
    assert f"No full run of {RECIPE} across two hosts yet" in built.text and "--hosts" in built.text


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (
            lambda d: d["subjects"][0]["cells"][0]["repetitions"][0]["result"].update(complete_requests=10**400),
            "less than or equal",
        ),
        (lambda d: d.update(subjects=[]), "subjects: tuple should have at least 1 item"),
        (lambda d: d["subjects"][0].update(cells=[]), "has no cells"),
    ],
    ids=["a count beyond any run", "no subjects", "a subject without cells"],
)
def test_impossible_data_is_one_warning_never_a_crash(
    tmp_path: Path, data_dir: Path, damage: Callable[[dict], object], says: str
) -> None:
    run_file = data_dir / RECIPE / RUN.name / "run.json"
    document = read_form(json.loads(run_file.read_text()))  # its repetitions as rows
    damage(document)
    run_file.write_text(json.dumps(document))
    built = build(tmp_path, f".. bench-results:: {RECIPE}\n\n.. bench-chart:: {RECIPE}\n\n.. bench-claims:: {RECIPE}\n")
    assert built.warnings and all("Traceback" not in w and "Exception" not in w for w in built.warnings)
    assert any(says in w for w in built.warnings), built.warnings


def test_a_run_of_another_recipe_or_a_linked_run_folder_is_a_warning(tmp_path: Path, data_dir: Path) -> None:
    run_file = data_dir / RECIPE / RUN.name / "run.json"
    document = read_form(json.loads(run_file.read_text()))  # its repetitions as rows
    run_file.write_text(json.dumps(document | {"recipe": "wsgi-servers"}))
    built = build(tmp_path, f".. bench-results:: {RECIPE}\n")
    assert len(built.warnings) == 1 and "a run of 'wsgi-servers' in the runs of 'cherrypy-speed'" in built.warnings[0]
    run_file.write_text(json.dumps(document))
    outside = tmp_path / "elsewhere"
    shutil.move(data_dir / RECIPE / RUN.name, outside)
    (data_dir / RECIPE / RUN.name).symlink_to(outside, target_is_directory=True)
    built = build(tmp_path, f".. bench-results:: {RECIPE}\n")
    assert len(built.warnings) == 1 and "a run folder is a symbolic link" in built.warnings[0]


def test_print_says_flagged_in_words_where_the_web_shows_the_flag_sign(tmp_path: Path) -> None:
    """The fonts of the PDF have no U+2691: every flag sign of a printed page becomes a word."""
    body = f"{FLAG} marks a figure not to take at face value.\n"
    assert FLAG in build(tmp_path / "web", body).text
    printed = build(tmp_path / "print", body, builder="xml")
    xml = unescape((printed.outdir / "index.xml").read_text())
    assert FLAG not in xml and f"{FLAG_IN_PRINT} marks a figure" in xml


def test_a_printed_page_gets_each_flame_graph_as_a_png_made_from_its_svg(tmp_path: Path, data_dir: Path) -> None:
    flamed = COMMITTED_DATA / RECIPE / "20261123T234904.925606Z-full"  # pinned: a run that recorded flame graphs
    shutil.copytree(flamed, data_dir / RECIPE / flamed.name)
    printed = build(tmp_path, f".. bench-flame:: {RECIPE}\n   :run: {flamed.name}\n", builder="xml")
    assert not printed.warnings, printed.warnings
    xml = (printed.outdir / "index.xml").read_text()
    uris = re.findall(r'<image [^>]*uri="([^"]+)"', xml)
    svgs = sorted((flamed / "flame").glob("*.svg"))
    assert len(uris) == len(svgs) >= 2 and all(uri.endswith(".png") for uri in uris)
    for uri in uris:
        assert Path(uri).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_the_pdf_keeps_no_style_value_of_an_earlier_passs_containers() -> None:
    from rinoh.layout import Container
    from rinoh.style import Styled

    from benchsite.sphinxext.pdf_template import STYLE_CACHE, forget_placed_pages

    class Element(Styled):
        pass

    element = Element()
    placed = Container.__new__(Container)  # one of a rendered page's containers (no page needed here)
    setattr(element, STYLE_CACHE, {("font_size", placed): 10, ("font_size", None): 9})
    document = SimpleNamespace(page_elements={"%index": "a page of the last pass"})
    forget_placed_pages(document)  # type: ignore[arg-type]
    assert getattr(element, STYLE_CACHE) == {("font_size", None): 9} and document.page_elements == {}


def test_a_disguised_copy_of_the_run_is_one_warning_however_many_directives_meet_it(
    tmp_path: Path, data_dir: Path
) -> None:
    """The faults round's copy: a new id, a new start time, three blanks after one report's last line."""
    copy = data_dir / RECIPE / "20261201T071248.420032Z-full"
    shutil.copytree(RUN, copy)
    document = json.loads((copy / "run.json").read_text())
    document["run_id"], document["started_at"] = copy.name, document["started_at"].replace("2026-11-23", "2026-12-01")
    (copy / "run.json").write_text(json.dumps(document))
    raw = next(copy.glob("raw/*/*/rep-1.txt"))
    raw.write_text(raw.read_text().rstrip("\n") + "   \n")
    directives = "\n\n".join(f".. bench-{name}::" for name in ("claims", "history", "work"))
    built = build(tmp_path, f".. bench-recipe:: {RECIPE}\n\n{directives}\n")
    assert len(built.warnings) == 1, built.warnings
    assert f"the same measured figures as run {RUN.name}" in built.warnings[0]
