"""Figures are checked for what they can be: percentiles rise with their rank and lie between the reported
min and max, memory readings fit the machine and PSS holds USS; whatever fails is refused in one line naming
the run and the field, before any page or comparison reads it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from tiny_site import build

from benchsite.errors import BenchError
from benchsite.model.columns import read_form
from benchsite.results.store import load_run
from benchsite.tools.memory import READINGS_HEADER, MemoryPeak, MemorySample, parse_readings, readings_text
from benchsite.tools.paced import PacedParseError, parse_paced_output
from committed import COMMITTED_DATA

LATENCY_RUN = COMMITTED_DATA / "cherrypy-speed" / "20261127T123846.855229Z-full"
REPORT = (LATENCY_RUN / "raw" / "framework" / "paced-25" / "rep-1.txt").read_text()


def with_line(report: str, old: str, new: str) -> str:
    assert re.search(old, report, re.M), old
    return re.sub(old, new, report, count=1, flags=re.M)


def test_the_committed_report_reads_and_its_percentiles_rise() -> None:
    ranks = [us for _, us in parse_paced_output(REPORT).latency_us]
    assert ranks == sorted(ranks) and len(ranks) == 7


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (r"^percentile us: 99 \d+$", "percentile us: 99 100", "its p99 (100 us) is below its p90"),
        (r"^percentile us: 99 \d+$", "percentile us: 99 -5", "malformed line 'percentile us: 99 -5'"),
        (r"^percentile us: 99 \d+$", "percentile us: 99 nan", "malformed line 'percentile us: 99 nan'"),
        (r"^percentile us: 100 \d+$", "percentile us: 100 1027685", "is not between its min"),
        (r"^bucket us: 335 3$", "bucket us: 335 -3", "malformed line 'bucket us: 335 -3'"),
    ],
)
def test_an_impossible_percentile_refuses_the_report(old: str, new: str, said: str) -> None:
    with pytest.raises(PacedParseError, match=re.escape(said)):
        parse_paced_output(with_line(REPORT, old, new))


def test_a_percentile_above_the_reported_max_is_refused() -> None:
    report = with_line(REPORT, r"^latency us: min 326 mean 1284.9 max \d+$", "latency us: min 326 mean 1284.9 max 9000")
    with pytest.raises(PacedParseError, match=re.escape("its p99.9 (16383 us) is not between its min (326 us)")):
        parse_paced_output(report)


def edited_copy(tmp_path: Path, edit: object) -> Path:
    """A copy of the committed latency run with run.json edited (the test's own input, never stored)."""
    target = tmp_path / LATENCY_RUN.name
    target.mkdir()
    document = json.loads((LATENCY_RUN / "run.json").read_text())
    edit(document)  # type: ignore[operator]
    (target / "run.json").write_text(json.dumps(document))
    return target


def first_rep_result(document: dict) -> dict:
    """The result of the first repetition of the first latency load (repetitions stored as columns or rows)."""
    repetitions = document["latency"]["subjects"][0]["loads"][0]["cell"]["repetitions"]
    return repetitions["result"][0] if isinstance(repetitions, dict) else repetitions[0]["result"]


def set_idle(field: str, value: int):
    return lambda document: document["subjects"][0]["idle_memory"].__setitem__(field, value)


def set_first_peak(share_of_idle: float):
    """An edit setting the first repetition's peak to a share of its subject's idle reading."""

    def edit(document: dict) -> None:
        document.update(read_form(document))  # its repetitions as rows
        subject = document["subjects"][0]
        idle = subject["idle_memory"]
        peak = subject["cells"][0]["repetitions"][0]["server_memory"]
        peak.update(uss_bytes=int(idle["uss_bytes"] * share_of_idle), pss_bytes=int(idle["pss_bytes"] * share_of_idle))

    return edit


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (set_idle("pss_bytes", 10**15), "framework's idle_memory: 953,674,316.4 MiB, more than the machine's"),
        (set_idle("pss_bytes", 1), "subjects[0].idle_memory: PSS (1 B) below USS"),
        (set_idle("uss_bytes", -1), "idle_memory.uss_bytes"),
        (set_idle("uss_bytes", 1), "USS (1 B) below one 4,096-byte page for each of its 1 processes"),
        (set_first_peak(0.49), "c1/rep-1.txt: its peak ("),
        (set_first_peak(0.49), "MiB PSS) is below half of framework's idle reading"),
        (set_first_peak(1e-9), "server_memory: USS (0 B) below one 4,096-byte page"),
        (
            lambda document: first_rep_result(document).__setitem__("percentiles_ms", [[50, 0.388], [99, 0.1]]),
            "its p99 (0.1 ms) is below its p50 (0.388 ms)",
        ),
        (
            lambda document: first_rep_result(document).__setitem__(
                "latency_us", [[50.0, 342], [99.0, 100], [100.0, 1027684]]
            ),
            "its p99 (100 us) is below its p50 (342 us)",
        ),
    ],
)
def test_the_loader_refuses_an_impossible_figure_in_one_line_naming_the_run(tmp_path: Path, edit, said: str) -> None:
    with pytest.raises(BenchError) as refused:
        load_run(edited_copy(tmp_path, edit))
    message = str(refused.value)
    assert "\n" not in message and message.startswith(str(tmp_path)) and "run.json" in message
    assert said in message, message


def test_every_committed_run_reads_with_its_figures_checked() -> None:
    for run_file in sorted(COMMITTED_DATA.glob("*/*/run.json")):
        load_run(run_file.parent)


def test_the_docs_build_names_every_bad_run_in_one_pass(tmp_path: Path) -> None:
    """Three damaged runs: one build names all three (it stopped at the first, a rebuild each)."""
    recipe = tmp_path / "data" / "cherrypy-speed"
    shutil.copytree(COMMITTED_DATA / "cherrypy-speed", recipe)
    full = sorted(path for path in recipe.glob("*-full") if path.is_dir())
    damaged = [full[0], full[1], full[-1]]
    (damaged[0] / "run.json").write_text("{")  # not JSON
    raw = next((damaged[1] / "raw").glob("*/c1/rep-1.txt"))
    raw.write_text(raw.read_text().replace("Complete requests:", "Complete  requests:"))  # no longer ab's report
    document = json.loads((damaged[2] / "run.json").read_text())
    document["subjects"][0]["idle_memory"]["pss_bytes"] = 1
    (damaged[2] / "run.json").write_text(json.dumps(document))
    page = build(tmp_path / "site", ".. bench-history:: cherrypy-speed\n", data_dir=tmp_path / "data")
    said = " ".join(page.warnings)
    assert all(run.name in said for run in damaged), said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "not a memory readings file"),
        (f"{READINGS_HEADER}\n", "a memory readings file with no reading"),
        (f"{READINGS_HEADER}\n10000 20000 1\n-5 200 1\n", "line 3 '-5 200 1' is not a reading"),
        (f"{READINGS_HEADER}\n30000 20000 1\n", "line 2 '30000 20000 1' cannot be a reading: PSS below USS"),
        (f"{READINGS_HEADER}\n10000 20000 0\n", "cannot be a reading"),
        (f"{READINGS_HEADER}\n10000 20000 3\n", "line 2 '10000 20000 3' cannot be a reading: USS below one page"),
        (f"{READINGS_HEADER}\n1 1 1\n", "cannot be a reading: USS below one page for each process"),
        (f"{READINGS_HEADER}\n{9 * 10**15} {9 * 10**15} 1\n", "an impossible reading"),
    ],
)
def test_a_memory_readings_file_that_is_not_readings_is_refused(text: str, said: str) -> None:
    with pytest.raises(BenchError, match=re.escape(said)):
        parse_readings(text)


def test_the_readings_peak_is_each_figures_own_maximum() -> None:
    samples = [MemorySample(10_000, 30_000, 1), MemorySample(20_000, 25_000, 3)]
    peak = MemoryPeak(uss_bytes=20_000, pss_bytes=30_000, processes=3, samples=2)
    assert parse_readings(readings_text(samples)) == peak
