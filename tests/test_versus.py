"""`invoke versus`: the sides' specifications, the A/B recipe, its order of measurement, and its statistics."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics
from html import unescape
from pathlib import Path

import pytest
from pages import one

from benchsite.errors import BenchError
from benchsite.harness.variants.copies import sides, with_option, with_variants
from benchsite.harness.variants.files import MAX_FILE_BYTES
from benchsite.model.machine import naming
from benchsite.model.method import METHOD_DIR
from benchsite.model.recipe import Recipe, load_recipe
from benchsite.model.upgrade import read_method, read_run
from benchsite.model.variant import VARIANTS_DIR, Variant, parse_variant
from benchsite.results.change_words import blind_said, detectable_said, fmt_sees
from benchsite.results.comparing import MARGIN, alike_pairs, beyond_margin, paired_cells
from benchsite.results.intervals import (
    Interval,
    detectable_change,
    paired_rounds,
    ratio_interval,
    simultaneous_level,
    unpaired_ratio_interval,
)
from benchsite.results.power import power_level
from benchsite.results.seeing import SEES_NOTHING, could_see
from benchsite.results.store import list_runs, load_view
from benchsite.results.view import RunView
from benchsite.sphinxext.history import short_run_name
from benchsite.tools import parse_report
from committed import COMMITTED_DATA
from conftest import REPO, run_invoke

RECIPE = "cherrypy-speed"


def loaded() -> Recipe:
    return load_recipe(RECIPE, REPO / "recipes", REPO / "conf")


def paired_recipe(pair: tuple[Variant, Variant], subjects: tuple[str, ...] = ()) -> Recipe:
    """The recipe of an A/B run of cherrypy-speed (no run made)."""
    return with_variants(loaded(), "versus", sides(*pair), subjects, REPO, print)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("checkout", Variant("checkout")),
        ("release:18.9.0", Variant("release", "18.9.0")),
        ("release:cheroot==8.0.0", Variant("release", "cheroot==8.0.0")),
        ("cherrypy==18.9.0", Variant("pins", "cherrypy==18.9.0")),
        ("CherryPy==17.4.2, cheroot==6.5.0", Variant("pins", "CherryPy==17.4.2,cheroot==6.5.0")),
        ("opt:--threads=4", Variant("opt", "--threads=4")),
        ("rev:HEAD~3", Variant("rev", "HEAD~3")),
    ],
)
def test_each_form_of_a_side_is_read(given: str, expected: Variant) -> None:
    assert parse_variant(given, "b") == expected
    assert expected.spec == given.replace(" ", "")


def test_a_folder_side_is_read_as_its_absolute_path(tmp_path: Path) -> None:
    assert parse_variant(f"dir:{tmp_path}", "b") == Variant("dir", str(tmp_path.resolve()))


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("patched", "is not a variant: give checkout, dir:PATH"),
        (" ", "no side B: give -b as checkout, dir:PATH"),
        ("tag:v1", "is not a variant"),
        ("dir:", "is not a variant"),
        ("dir:/no/such/folder", "no folder /no/such/folder: give the folder"),
        ("opt:threads=4", "give the option with its new value, as opt:--threads=4"),
        ("opt:--threads", "give the option with its new value"),
        ("release:latest", "'latest' is not a release number"),
        ("rev:--output=x", "is not a git revision"),
        ("cheroot==", "'cheroot==' is not a pin: give NAME==VERSION"),
        ("cheroot==8.0.0,==1", "'==1' is not a pin"),
        ("cheroot==8.0.0,cheroot==9.0.0", "cheroot is pinned twice"),
        ("che root==8", "is not a pin"),
    ],
)
def test_a_malformed_side_is_a_one_line_error_naming_the_forms(given: str, says: str) -> None:
    with pytest.raises(BenchError, match=None) as raised:
        parse_variant(given, "b")
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_the_copies_of_a_subject_sit_side_by_side_so_each_round_measures_them_back_to_back(tmp_path: Path) -> None:
    (tmp_path / "framework_app.py").write_text((REPO / "recipes" / RECIPE / "framework_app.py").read_text() + "\n")
    paired = paired_recipe((Variant("checkout"), parse_variant(f"dir:{tmp_path}", "b")))
    assert [s.name for s in paired.subjects] == ["framework-a", "framework-b"]  # raw-wsgi: neither side changes it
    a, b = paired.subjects
    assert a.label == "CherryPy framework [A: checkout]"
    assert b.argv[0] == "{python}" and b.argv[1].startswith("{variants}/b-") and b.argv[1].endswith("/framework_app.py")
    folder = VARIANTS_DIR / b.argv[1].split("/")[1]
    assert (folder / "framework_app.py").read_text() == (tmp_path / "framework_app.py").read_text()
    assert (folder / "raw_wsgi_app.py").is_file()  # the rest of the recipe's folder, for what the app imports


def test_beside_a_folder_the_checkout_runs_from_a_copy_whose_path_is_as_long_as_the_other_sides(
    tmp_path: Path,
) -> None:
    changed = (REPO / "recipes" / RECIPE / "framework_app.py").read_text() + "\n# B's\n"  # another file: measured
    (tmp_path / "framework_app.py").write_text(changed)
    paired = paired_recipe((Variant("checkout"), parse_variant(f"dir:{tmp_path}", "b")))
    a, b = paired.subjects
    assert a.argv[1].startswith("{variants}/a-") and len(a.argv[1]) == len(b.argv[1])
    assert [token for token in a.argv if token != a.argv[1]] == [token for token in b.argv if token != b.argv[1]]
    source = REPO / "recipes" / RECIPE / "framework_app.py"
    assert (VARIANTS_DIR / a.argv[1].split("/", 1)[1]).read_bytes() == source.read_bytes()
    assert paired.variants is not None
    recorded_a, _ = paired.variants.variants
    assert recorded_a.files == {"framework_app.py": hashlib.sha256(source.read_bytes()).hexdigest()}
    assert recorded_a.installed  # still what the checkout's environment ran


def test_named_subjects_are_measured_even_where_neither_side_changes_them() -> None:
    paired = paired_recipe((Variant("checkout"), Variant("checkout")), ("raw-wsgi",))
    assert [s.name for s in paired.subjects] == ["raw-wsgi-a", "raw-wsgi-b"]
    assert paired.subjects[0].argv == paired.subjects[1].argv


@pytest.mark.parametrize(
    ("sides", "subjects", "says"),
    [
        ((Variant("checkout"), Variant("checkout")), (), "neither checkout nor checkout changes a subject"),
        ((Variant("checkout"), Variant("checkout")), ("nginx",), "has no subject nginx: choose among framework"),
        ((Variant("checkout"), Variant("opt", "--threads=4")), (), "neither checkout nor opt:--threads=4 changes"),
        ((Variant("checkout"), Variant("rev", "no-such-revision")), (), "git has no recipes/cherrypy-speed/"),
    ],
)
def test_a_side_that_changes_nothing_or_cannot_be_found_is_refused(
    sides: tuple[Variant, Variant], subjects: tuple[str, ...], says: str
) -> None:
    with pytest.raises(BenchError) as raised:
        paired_recipe(sides, subjects)
    assert says in str(raised.value)


def test_the_run_records_each_side_with_its_copies_and_what_it_ran(tmp_path: Path) -> None:
    (tmp_path / "framework_app.py").write_text((REPO / "recipes" / RECIPE / "framework_app.py").read_text() + "\n")
    paired = paired_recipe((Variant("checkout"), parse_variant(f"dir:{tmp_path}", "b")))
    assert paired.variants is not None and not paired.variants.sweep
    a, b = paired.variants.variants
    assert (a.name, a.kind, a.spec, dict(a.copies)) == ("a", "checkout", "checkout", {"framework": "framework-a"})
    assert (b.name, b.kind, b.spec, dict(b.copies)) == (
        "b",
        "dir",
        f"dir:{tmp_path.name}",
        {"framework": "framework-b"},
    )
    assert a.version_of("CherryPy") == "18.10.0" and a.version_of("cheroot") == "11.1.2"  # the checkout's
    digest = hashlib.sha256((tmp_path / "framework_app.py").read_bytes()).hexdigest()
    assert b.files == {"framework_app.py": digest} and b.installed == ()


@pytest.mark.parametrize("kind", ["symlink", "fifo", "oversize", "folder"])
def test_a_folder_side_takes_its_own_regular_files_only(tmp_path: Path, kind: str) -> None:
    side = tmp_path / "side"
    side.mkdir()
    secret = tmp_path / "secret"
    secret.write_text("root:x:0:0\n")
    target = side / "framework_app.py"
    if kind == "symlink":
        target.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "oversize":
        target.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    else:
        target.mkdir()
    before = sorted(VARIANTS_DIR.glob("*")) if VARIANTS_DIR.is_dir() else []
    with pytest.raises(BenchError) as raised:
        paired_recipe((Variant("checkout"), parse_variant(f"dir:{side}", "b")))
    said = str(raised.value)
    assert "\n" not in said and str(target) in said and "root:x" not in said
    assert (sorted(VARIANTS_DIR.glob("*")) if VARIANTS_DIR.is_dir() else []) == before


def test_a_pin_of_a_distribution_no_measured_subject_runs_is_one_line() -> None:
    with pytest.raises(BenchError) as raised:
        paired_recipe((Variant("checkout"), parse_variant("waitress==3.0.0", "b")))
    assert "neither checkout nor waitress==3.0.0 changes a subject of cherrypy-speed" in str(raised.value)
    with pytest.raises(BenchError) as raised:
        paired_recipe((Variant("checkout"), parse_variant("CherryPy==17.4.2", "b")), ("raw-wsgi",))
    said = str(raised.value)
    assert "no measured subject of cherrypy-speed runs CherryPy: they run" in said and "cheroot" in said


@pytest.mark.integration
def test_a_pin_runs_the_subjects_that_run_it_on_that_version_and_the_rest_as_the_checkout_has_it() -> None:
    paired = paired_recipe((parse_variant("cheroot==11.1.2", "a"), parse_variant("cheroot==8.6.0", "b")))
    assert [s.name for s in paired.subjects] == ["framework-a", "framework-b", "raw-wsgi-a", "raw-wsgi-b"]
    assert paired.variants is not None
    a, b = paired.variants.variants
    assert a.version_of("cheroot") == "11.1.2" and b.version_of("cheroot") == "8.6.0"
    assert a.version_of("CherryPy") == b.version_of("CherryPy") == "18.10.0"  # the checkout's, on both sides
    assert a.resolved_as_of is None and b.kind == "pins"
    for variant in (a, b):
        for name, copy in variant.copies.items():
            original, made = loaded().subject(name), paired.subject(copy)
            assert original is not None and made is not None
            assert made.argv[0].startswith("{sweep}/cheroot-") and made.argv[1:] == original.argv[1:]


@pytest.mark.integration
def test_pins_that_cannot_live_together_are_one_line_naming_the_conflict() -> None:
    with pytest.raises(BenchError) as raised:
        paired_recipe((Variant("checkout"), parse_variant("cheroot==6.5.0", "b")))
    said = str(raised.value)
    assert "\n" not in said and "cheroot==6.5.0" in said and "cherrypy" in said.lower()


def test_an_option_side_replaces_the_value_in_either_form() -> None:
    argv = ("{python}", "-m", "cheroot", "--threads", "10", "--workers=1", "app")
    subject = loaded().subjects[0].model_copy(update={"argv": argv})
    expected = ("{python}", "-m", "cheroot", "--threads", "4", "--workers=1", "app")
    assert with_option("--threads", "4", subject) == expected
    assert with_option("--workers", "2", subject)[5] == "--workers=2"


def test_paired_rounds_of_a_frozen_case_give_the_known_ratio_and_interval() -> None:
    """B ÷ A round by round: ratios 1.0 and 1.21 have the geometric mean 1.1; on the logs (0 and ln 1.21) the
    two-sided 95 % t interval with one degree of freedom is ln 1.1 ± 12.7062 × ln(1.21) / 2."""
    a = {1: 1000.0, 2: 2000.0}
    b = {1: 1000.0, 2: 2420.0}
    ratios = paired_rounds(b, a)
    assert ratios == pytest.approx([1.0, 1.21])
    found = ratio_interval(ratios)
    assert found is not None and found.low is not None and found.high is not None
    half = 12.706204736 * math.log(1.21) / 2
    assert found.value == pytest.approx(1.1)
    assert found.low == pytest.approx(1.1 * math.exp(-half)) and found.high == pytest.approx(1.1 * math.exp(half))


def called_share(ratios: list[float], sees: float, level: float) -> float:
    """How often a run of these ratios' spread calls a change of `sees`: the noncentral t's share beyond the
    interval's bound, B ÷ A true at 1 + sees (scipy's nct: another way to the same figure than statsmodels')."""
    from scipy import stats

    logs = [math.log(r) for r in ratios]
    n, spread = len(logs), statistics.stdev(logs)
    shift = (math.log1p(sees) - math.log1p(MARGIN)) / (spread / math.sqrt(n))
    bound = stats.t.ppf(1 - (1 - level) / 2, n - 1)
    return float(stats.nct.sf(bound, n - 1, shift))


def test_the_smallest_detectable_change_of_a_frozen_case_is_called_80_percent_of_the_time() -> None:
    ratios = [1.012, 0.991, 1.020, 0.984, 1.003, 1.015, 0.987, 1.006]  # eight rounds, a spread of ±1.3 %
    sees = detectable_change(ratios, 0.95, MARGIN)
    assert sees is not None and 0.02 < sees < 0.04
    assert called_share(ratios, sees, 0.95) == pytest.approx(0.8, abs=1e-4)
    assert detectable_change(ratios[:1], 0.95, MARGIN) is None and detectable_change([1.0, 1.0], 0.95, MARGIN) == MARGIN
    wider = detectable_change([1 + 2 * (r - 1) for r in ratios], 0.95, MARGIN)
    assert wider is not None and wider > sees  # twice the spread: a larger change needed


def test_each_cell_of_a_committed_ab_run_says_what_it_could_see_in_both_currencies() -> None:
    view = load_view(COMMITTED_DATA / "experiments" / "versus" / RECIPE / "20261126T172653.987849Z-versus")
    cells = paired_cells(view)
    level = simultaneous_level(len(cells))
    for cell in cells:
        b, a = (view.round_values(side, cell.cell, usable_only=False) or {} for side in (cell.b, cell.a))
        assert cell.time_sees is not None
        assert called_share(paired_rounds(b, a), cell.time_sees, level) == pytest.approx(0.8, abs=1e-4)
        if cell.work is not None:  # a counted cell (c1): work sees finer than time
            assert cell.work_sees is not None and MARGIN < cell.work_sees < cell.time_sees
    assert any(cell.work is not None for cell in cells)


@pytest.mark.integration
def test_the_ab_page_says_what_each_run_could_see(committed_site: Path) -> None:
    html = unescape((committed_site / "versus.html").read_text())
    for run in ("20261125T081815.007972Z-versus", "20261126T223658.693235Z-versus"):
        said = detectable_said(paired_cells(load_view(COMMITTED_DATA / "experiments" / "versus" / RECIPE / run)))
        assert said in html and "80 % of the time" in said


def test_work_of_a_frozen_case_gives_the_known_change() -> None:
    """Batches of 1,000 and 1,020 instructions per request, each side constant: a change of exactly +2 %."""
    found = unpaired_ratio_interval([1020.0, 1020.0, 1020.0], [1000.0, 1000.0, 1000.0])
    assert found is not None and found[0].value == pytest.approx(1.02) and found[0].low == pytest.approx(1.02)


@pytest.mark.integration
def test_versus_refuses_a_bad_side_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    runs = tmp_path / RECIPE
    before = sorted(VARIANTS_DIR.glob("*")) if VARIANTS_DIR.is_dir() else []
    runs_before = list_runs(runs)
    result = run_invoke("versus", RECIPE, "-b", "patched", "--data-dir", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: -b 'patched' is not a variant: give checkout, dir:PATH, rev:REV, NAME==VERSION[,NAME==VERSION], "
        "release:VERSION, opt:--FLAG=VALUE, NAME@git:REPO#REV or NAME@dir:PATH"
    ]
    unasked = run_invoke("versus", RECIPE, "--data-dir", str(tmp_path))  # no -b, and no --aa
    assert unasked.returncode == 1 and unasked.stderr.strip().splitlines() == [
        "error: no side B: give -b as checkout, dir:PATH, rev:REV, NAME==VERSION[,NAME==VERSION], "
        "release:VERSION, opt:--FLAG=VALUE, NAME@git:REPO#REV or NAME@dir:PATH"
    ]
    assert (sorted(VARIANTS_DIR.glob("*")) if VARIANTS_DIR.is_dir() else []) == before
    assert list_runs(runs) == runs_before and not runs.exists()


@pytest.mark.parametrize(
    ("low", "high", "called"),
    [
        (0.991, 0.997, False),  # decisive, but no more than two starts of the same code differ by
        (1.003, 1.009, False),
        (0.95, 0.989, True),
        (1.011, 1.05, True),
        (0.98, 1.02, False),
    ],
)
def test_a_change_is_called_only_where_its_whole_interval_lies_beyond_the_margin(
    low: float, high: float, called: bool
) -> None:
    interval = Interval((low * high) ** 0.5, low, high, 0.95, 10)
    assert beyond_margin(interval) is called
    assert MARGIN == 0.01


POWER = COMMITTED_DATA / "experiments" / "power" / RECIPE


def committed_power(name: str = "power-one-start") -> list[tuple[str, list[RunView]]]:
    record = read_method(COMMITTED_DATA / METHOD_DIR / f"{name}.toml")
    return [(s.label, [load_view(path) for path in s.run_dirs(COMMITTED_DATA)]) for s in record.sets]


def test_each_round_of_an_ab_run_measures_both_sides_back_to_back_a_first_then_b_first() -> None:
    view = committed_power()[1][1][0]  # the first A/A run
    a, b = (view.run.subject(f"framework-{side}") for side in "ab")
    assert a is not None and b is not None
    starts = {
        side: {rep.index: rep.started_after_s for rep in record.cell("c1").repetitions}  # type: ignore[union-attr]
        for side, record in (("a", a), ("b", b))
    }
    assert len(starts["a"]) >= 16
    for index in starts["a"]:
        a_first = starts["a"][index] < starts["b"][index]
        assert a_first is (index % 2 == 1), index


def test_an_ab_runs_ratios_come_from_its_raw_outputs_round_by_round() -> None:
    view = committed_power()[1][1][0]
    values = {}
    for side in "ab":
        cell = view.run.subject(f"framework-{side}").cell("c1")  # type: ignore[union-attr]
        for rep in cell.repetitions:
            assert rep.result == parse_report(cell.tool, view.run.raw_text(rep))
        values[side] = {rep.index: rep.result.requests_per_s for rep in cell.repetitions if rep.result}
    found = next(c for c in paired_cells(view) if c.cell == "c1")
    ratios = [values["b"][i] / values["a"][i] for i in sorted(values["a"])]
    assert found.time is not None and found.time.count == len(ratios)
    assert found.time.value == pytest.approx(math.exp(sum(map(math.log, ratios)) / len(ratios)))


def test_the_power_benchmark_calls_a_5_percent_slowdown_and_a_2_percent_work_change_but_not_an_aa_pair() -> None:
    levels = {label.split(" (")[0]: power_level(label, views) for label, views in committed_power()[1:]}
    assert set(levels) == {"A/A", "2 % work", "2 % time", "5 % time", "10 % time", "25 % time"}
    assert all(level.runs >= 10 for level in levels.values())
    assert levels["A/A"].time_called <= 1 and levels["A/A"].work_called == 0
    assert levels["5 % time"].time_called >= 9 * levels["5 % time"].runs // 10
    assert levels["2 % work"].work_called == levels["2 % work"].runs
    assert levels["25 % time"].time_called == levels["25 % time"].runs


def test_under_a_cpu_hog_a_5_percent_slowdown_is_called_by_time_and_an_aa_pair_is_not() -> None:
    levels = {label.split(" (")[0]: power_level(label, views) for label, views in committed_power("power-busy")[1:]}
    assert set(levels) == {"A/A", "5 % time"}
    assert all(level.runs >= 10 for level in levels.values())
    assert levels["A/A"].time_called <= 1 and levels["A/A"].work_called == 0
    assert levels["5 % time"].time_called >= 9 * levels["5 % time"].runs // 10
    assert levels["5 % time"].work_called == levels["5 % time"].runs  # its loop adds instructions too
    assert all(cell.time is not None for level in levels.values() for cell in level.cells)  # no time cell "—"


@pytest.mark.integration
def test_the_calibration_page_shows_the_power_counts_recomputed_from_the_runs(committed_site: Path) -> None:
    html = unescape((committed_site / "calibration.html").read_text())
    for record in ("power", "power-busy", "power-path", "power-one-start"):
        for label, views in committed_power(record)[1:]:
            level = power_level(label, views)
            name = label.split(" (")[0]
            found = one(html, power=name, currency="time", record=record)
            assert found.text == f"{level.time_called} of {level.runs}"
            assert one(html, power=name, currency="work", record=record).text == f"{level.work_called} of {level.runs}"


E2E = [
    # (recipe, -a, -b, subjects, what each side's copy must show)
    ("cherrypy-speed", "cheroot==11.1.2", "cheroot==8.6.0", "raw-wsgi", ("Cheroot/11.1.2", "Cheroot/8.6.0")),
    ("cherrypy-speed", "rev:HEAD", "release:cheroot==8.6.0", "raw-wsgi", ("Cheroot/11.1.2", "Cheroot/8.6.0")),
    ("cherrypy-speed", "checkout", "dir:{copied}", "raw-wsgi", ("Cheroot/11.1.2", "Cheroot/11.1.2")),
    ("cherrypy-speed", "CherryPy==18.9.0,cheroot==10.0.1", "checkout", "framework", ("CherryPy/18.9.0", None)),
    ("wsgi-servers", "checkout", "waitress==3.0.0", "waitress", ("waitress", "waitress")),
    ("wsgi-servers", "opt:--threads=10", "opt:--threads=4", "cheroot", ("Cheroot/11.1.2", "Cheroot/11.1.2")),
]


@pytest.mark.integration
@pytest.mark.parametrize(("recipe", "a", "b", "subject", "banners"), E2E, ids=[f"{e[1]} vs {e[2]}" for e in E2E])
def test_every_kind_of_variant_runs_end_to_end_and_the_run_records_both_sides(
    tmp_path: Path, recipe: str, a: str, b: str, subject: str, banners: tuple[str | None, str | None]
) -> None:
    if "{copied}" in b:  # a folder holding the subject's app, changed by a comment
        copied = tmp_path / "side"
        copied.mkdir()
        (copied / "raw_wsgi_app.py").write_text((REPO / "recipes" / recipe / "raw_wsgi_app.py").read_text() + "#\n")
        b = b.format(copied=copied)
    result = run_invoke(
        "versus", recipe, "-a", a, "-b", b, "--subjects", subject, "--profile", "quick", "--data-dir", str(tmp_path),
        timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "B ÷ A" in result.stdout and "Traceback" not in result.stderr
    assert "sees" in result.stdout and "the smallest change this run would have called" in result.stderr
    [run_dir] = list_runs(tmp_path / recipe)
    run = load_view(run_dir).run
    assert run.variants is not None and not run.variants.sweep and run.variants.subjects == (subject,)
    for variant, given, banner in zip(run.variants.variants, (a, b), banners, strict=True):
        assert variant.spec == parse_variant(given, variant.name).shown
        copy = run.subject(variant.copies[subject])
        assert copy is not None and all(rep.ok for cell in copy.cells for rep in cell.repetitions)
        if banner is not None:
            assert copy.server_software is not None and copy.server_software.startswith(banner), copy.server_software
        for pin in given.removeprefix("release:").split(","):
            if "==" in pin:
                name, version = pin.split("==")
                assert variant.version_of(name) == version  # the environment it ran holds the pin
    assert [c.subject for c in paired_cells(load_view(run_dir))] == [subject] * len(run.subjects[0].cells)
    named = naming("", REPO / "conf")
    assert named is None or run.machine.name == named.name  # the session's machine name, as `invoke recipe`'s


def broken_side(tmp_path: Path) -> Path:
    """A folder side whose raw WSGI app has a syntax error: its server exits at once."""
    side = tmp_path / "broken"
    side.mkdir()
    (side / "raw_wsgi_app.py").write_text("def app(:\n")
    return side


@pytest.mark.integration
def test_a_side_that_cannot_start_stops_the_run_before_any_round_and_nothing_is_kept(tmp_path: Path) -> None:
    data = tmp_path / "data"
    side = broken_side(tmp_path)
    result = run_invoke("versus", RECIPE, "-b", f"dir:{side}", "--subjects", "raw-wsgi", "--data-dir", str(data))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "cannot run" in error and "invalid syntax" in error and "fix that side and run again" in error
    assert "round 1" not in result.stderr and "B ÷ A" not in result.stdout  # stopped before any round
    assert not (data / RECIPE).exists() or not any((data / RECIPE).iterdir())


@pytest.mark.integration
def test_clean_empties_build_variants_of_the_sides_no_run_uses(tmp_path: Path) -> None:
    stale = VARIANTS_DIR / "b-000000000000"
    stale.mkdir(parents=True, exist_ok=True)
    (stale / "raw_wsgi_app.py").write_text("# a side an earlier run made\n")
    side = broken_side(tmp_path)
    result = run_invoke(
        "versus", RECIPE, "-b", f"dir:{side}", "--subjects", "raw-wsgi", "--data-dir", str(tmp_path / "data"), "--clean"
    )
    assert result.returncode == 1 and "cannot run" in result.stderr  # the run's own side was kept for it
    assert not stale.exists() and "no run uses from build/variants/" in result.stderr


def with_interference(changes: dict[tuple[str, int], float]) -> RunView:
    """The committed A/A power run with others' busy time set on some repetitions of c1 ({(copy, round): share
    of its wall time}), each marked disturbed as the run's settings would (a constructed run: never stored)."""
    source = committed_power()[1][1][0].run
    document = json.loads(source.run_file.read_text())
    for subject in document["subjects"]:
        for cell in subject["cells"]:
            columns = cell["repetitions"]["columns"]
            for position, index in enumerate(columns["index"]):
                share = changes.get((subject["name"], index)) if cell["name"] == "c1" else None
                if share is not None:
                    columns["other_busy_s"][position] = share * columns["wall_s"][position]
                    columns["steal_s"][position] = 0.0
                    columns["disturbed"][position] = share > source.settings.disturbed_share
    return RunView(read_run(document, source.run_file).stored_at(source.path))


def test_a_round_hit_alike_on_both_sides_is_kept_and_one_hit_on_a_side_alone_is_dropped() -> None:
    rounds = len(with_interference({}).run.subject("framework-a").cell("c1").repetitions)  # type: ignore[union-attr]
    kept = alike_pairs(with_interference({}), "framework-a", "framework-b", "c1")
    assert len(kept) == rounds  # a quiet run: every round's pair
    alike_hit = with_interference({("framework-a", 2): 0.50, ("framework-b", 2): 0.40})
    assert len(alike_pairs(alike_hit, "framework-a", "framework-b", "c1")) == rounds  # both hit: still compared
    one_side = with_interference({("framework-b", 2): 0.50})
    assert len(alike_pairs(one_side, "framework-a", "framework-b", "c1")) == rounds - 1  # B alone hit: dropped
    unlike = with_interference({("framework-a", 3): 0.90, ("framework-b", 3): 0.30})
    assert len(alike_pairs(unlike, "framework-a", "framework-b", "c1")) == rounds - 1  # hit, but not alike


def aa_runs_on_the_page() -> list[str]:
    """The A/A runs the A/B page's bench-aa directive names (its argument lines after the folder)."""
    text = (REPO / "docs" / "versus.rst").read_text()
    block = text.split(".. bench-aa:: experiments/versus/cherrypy-speed", 1)[1].split("\n\n", 1)[0]
    return block.split()


def test_the_aa_runs_of_the_example_call_no_more_than_the_level_allows() -> None:
    """The committed A/A runs of the page's example (B differs from A by a docstring word), quiet and beside the
    hog: in each currency, the runs that called any cell changed are no more than a 5 % rule gives by chance
    (a one-sided binomial test at 1 %, scipy), and the raw server, identical on both sides, was never measured."""
    from scipy.stats import binomtest

    runs = aa_runs_on_the_page()
    assert len(runs) >= 10
    views = [load_view(COMMITTED_DATA / "experiments" / "versus" / RECIPE / run) for run in runs]
    time_called = sum(any(cell.time_changed for cell in paired_cells(view)) for view in views)
    work_called = sum(any(cell.work_changed for cell in paired_cells(view)) for view in views)
    for called in (time_called, work_called):
        assert binomtest(called, len(views), 0.05, alternative="greater").pvalue > 0.01, (time_called, work_called)
    assert all({cell.subject for cell in paired_cells(view)} == {"framework"} for view in views)
    assert sum(view.disturbed[0] > 0 for view in views) >= len(views) // 2  # half of them beside the hog


@pytest.mark.integration
def test_the_ab_page_tallies_its_aa_runs_as_the_runs_say(committed_site: Path) -> None:
    html = " ".join(unescape((committed_site / "versus.html").read_text()).split())
    runs = aa_runs_on_the_page()
    views = [load_view(COMMITTED_DATA / "experiments" / "versus" / RECIPE / run) for run in runs]
    called = sum(any(c.time_changed or c.work_changed for c in paired_cells(view)) for view in views)
    assert f"{len(runs)} A/A runs: {called} of them called any change; time called " in html
    assert all(short_run_name(run) in html for run in runs)


def test_an_ab_run_whose_side_failed_every_repetition_is_said_for_the_exit_policy(tmp_path: Path) -> None:
    """A side that measured nothing (its server gone from the first repetition) leaves nothing to compare: the
    command names it and exits non-zero; a side that measured is not named."""
    from benchsite.commands.recipe import _sides_that_failed_every_repetition
    from benchsite.model.columns import read_form
    from benchsite.results.store import load_run

    source = COMMITTED_DATA / "experiments" / "versus" / "cherrypy-speed" / "20261127T150521.998138Z-versus"
    copy = tmp_path / source.name
    copy.mkdir()
    document = read_form(json.loads((source / "run.json").read_text()))
    assert _sides_that_failed_every_repetition(load_run(source)) == []
    failed = document["subjects"][-1]
    for cell in failed["cells"]:
        for rep in cell["repetitions"]:
            rep.update(result=None, error="the server had exited with code 0 before this repetition")
    (copy / "run.json").write_text(json.dumps(document))
    (said,) = _sides_that_failed_every_repetition(load_run(copy))
    assert f"({failed['name']}) failed every repetition: the server had exited with code 0" in said


def raw_rates(run_dir: Path, subject: str, cell: str) -> list[float]:
    """Every 'Requests per second:' an ab report of the subject's cell printed, read from the raw files alone."""
    found = [
        re.search(r"^Requests per second:\s+([\d.]+)", path.read_text(errors="replace"), re.M)
        for path in sorted((run_dir / "raw" / subject / cell).glob("rep-*.txt"))
    ]
    return [float(match.group(1)) for match in found if match and float(match.group(1)) > 0]


def shown_change(said: str) -> float | None:
    """The change a 'sees' text shows ("≥ 2.1 %" → 0.021, "≥ 5.75× either way" → 4.75), None for words alone."""
    if match := re.fullmatch(r"≥ ([\d,.]+) %", said):
        return float(match.group(1).replace(",", "")) / 100
    if match := re.fullmatch(r"≥ ([\d,.]+)× either way", said):
        return float(match.group(1).replace(",", "")) - 1
    return None


def test_no_ab_output_sees_a_change_beyond_what_the_cells_own_figures_reach() -> None:
    """A busy run of 3 rounds printed "sees ≥ 9,932,600×" and "no change under 63976 %": every 'sees' the terminal
    or the page shows in a committed A/B run is a change its cell's own figures (read from the raw ab reports)
    reach, or words."""
    shown = 0
    for run_dir in sorted((COMMITTED_DATA / "experiments" / "versus").glob("*/*-versus")):
        cells = paired_cells(load_view(run_dir))
        for cell in cells:
            said = fmt_sees(cell.time_could_see)
            change = shown_change(said)
            if change is None:
                assert said in ("—", "no change it could see"), said
                continue
            figures = raw_rates(run_dir, cell.a, cell.cell) + raw_rates(run_dir, cell.b, cell.cell)
            assert change <= max(figures) / min(figures) - 1 + 0.001, (run_dir.name, cell.cell, said, figures)
            shown += 1
        page = detectable_said(cells)
        for percent in re.findall(r"([\d.]+) %", page.split(" is ", 1)[1]):
            assert float(percent) < 100 * SEES_NOTHING, page
    assert shown >= 10


def test_time_that_could_see_nothing_is_said_in_words_with_why() -> None:
    assert fmt_sees(could_see(99326.0, None)) == "no change it could see"  # was "≥ 9,932,600×"
    assert fmt_sees(could_see(0.30, 0.20)) == "no change it could see"  # beyond what its figures reach
    assert fmt_sees(could_see(0.021, 0.20)) == "≥ 2.1 %" and fmt_sees(could_see(None, 0.2)) == "—"
    said = blind_said([math.inf, math.inf], 4, 3, (9, 24))
    assert said == (
        "time in this run could not see any change in 2 of 4 cells (3 rounds, others took a CPU in 9 of its 24 "
        "repetitions): judge by work, or re-run on a quiet machine"
    )
    assert "sees no change smaller than 12.0 %" in blind_said([0.12, math.inf], 4, 12, (0, 48))
    assert "(12 rounds, too few to tell)" in blind_said([0.12], 4, 12, (0, 48))
