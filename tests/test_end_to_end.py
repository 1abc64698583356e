"""The real recipe against the real servers and the real ab, then the real docs build."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
from html import unescape
from pathlib import Path

import psutil
import pytest

from benchsite.ab import parse_ab_output
from benchsite.processes import port_is_free
from benchsite.sphinxext.tables import fmt_rps, fmt_us
from benchsite.stats import summarize
from benchsite.store import RunRecord, list_runs, load_run
from conftest import INVOKE, REPO, run_invoke

RECIPE = "cherrypy-speed"
PAGE = Path("recipes") / f"{RECIPE}.html"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> RunRecord:
    """One quick run of cherrypy-speed added to a copy of data/ (never into data/ itself)."""
    data_dir = tmp_path_factory.mktemp("site") / "data"
    shutil.copytree(REPO / "data", data_dir)
    committed = list_runs(data_dir / RECIPE)
    result = run_invoke("recipe", RECIPE, "--profile", "quick", "--data-dir", str(data_dir))
    assert result.returncode == 0, result.stderr
    [run_dir] = [run for run in list_runs(data_dir / RECIPE) if run not in committed]
    assert run_dir == list_runs(data_dir / RECIPE)[-1]  # the newest run is the one the page shows
    return load_run(run_dir)


def test_the_quick_run_measures_both_subjects_in_all_four_cells(quick_run: RunRecord) -> None:
    assert [s.name for s in quick_run.subjects] == ["framework", "raw-wsgi"]
    for subject in quick_run.subjects:
        assert [c.name for c in subject.cells] == ["c1", "c1-k", "c10", "c10-k"]
        assert subject.verification["status"] == 200 and subject.verification["body"] == "OK"
        for cell in subject.cells:
            summary = summarize(cell)
            assert summary.repetitions_ok == 1 and not summary.flagged, summary.failure_reasons
            assert summary.server_cpu_us_per_request_median > 0
            assert summary.keepalive_honoured is (True if cell.keepalive else None)
    assert quick_run.subject("framework").server_software.startswith("CherryPy/")
    assert quick_run.subject("raw-wsgi").server_software.startswith("Cheroot/")


def test_parsed_values_equal_the_raw_output_files(quick_run: RunRecord) -> None:
    for subject in quick_run.subjects:
        for cell in subject.cells:
            for rep in cell.repetitions:
                assert rep.result == parse_ab_output(quick_run.raw_text(rep))
                assert rep.result.complete_requests == quick_run.profile["requests"]
                assert rep.argv[-1].startswith("http://127.0.0.1:")


def test_the_run_records_machine_versions_pinning_and_commands(quick_run: RunRecord) -> None:
    env = quick_run.environment
    assert env["tools"]["ab"].startswith("This is ApacheBench, Version 2.3")
    assert env["packages"]["CherryPy"][0].isdigit() and env["packages"]["cheroot"][0].isdigit()
    assert env["cpu_count"] >= 1 and env["python"].startswith("CPython")
    if len(psutil.Process().cpu_affinity()) >= 2:
        assert (quick_run.settings["server_cpu"], quick_run.settings["tool_cpu"]) == (0, 1)
    assert quick_run.subject("framework").argv[1] == "framework_app.py"


def _build(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_invoke("docs", "--output", str(tmp_path / "html"), *extra)


def _page_text(html_dir: Path) -> str:
    return unescape((html_dir / PAGE).read_text())


def table_rows(html: str) -> list[list[str]]:
    """Every table row of a page as the text of its cells, tags stripped."""
    rows = []
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.S):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S)
        rows.append([re.sub(r"<[^>]+>", "", cell).strip() for cell in cells])
    return rows


def test_the_page_shows_the_runs_values_chart_and_raw_output(quick_run: RunRecord, tmp_path: Path) -> None:
    result = _build(tmp_path, "--data-dir", str(quick_run.path.parent.parent))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    html = _page_text(tmp_path / "html")
    assert quick_run.run_id in html
    rows = {(row[0], row[1]): row for row in table_rows(html) if len(row) == 11}
    for subject in quick_run.subjects:
        for cell in subject.cells:
            summary = summarize(cell)
            row = rows[(subject.label, cell.label)]
            assert row[2] == fmt_rps(summary.rps_median)
            assert row[3] == f"{fmt_rps(summary.rps_min)} – {fmt_rps(summary.rps_max)}"
            assert row[5] == fmt_us(summary.server_cpu_us_per_request_median)
            assert row[9] == ("honoured" if cell.keepalive else "—")
            assert f'href="#bench-raw-{RECIPE}-{subject.name}-{cell.name}"' in html
            server_line = next(line for line in quick_run.raw_text(cell.repetitions[0]).splitlines()
                               if line.startswith("Requests per second"))
            assert server_line in html
    charts = re.findall(r'<img src="\.\./_images/(bench-[0-9a-f]{16}\.svg)" alt="([^"]+)"', html)
    assert len(charts) == 2
    for name, alt in charts:
        assert (tmp_path / "html" / "_images" / name).stat().st_size > 1000
        assert "CherryPy framework" in alt
    assert "Test 7" in html and "1,008" in html  # the published figures, parsed from the seed's report
    assert "REPRODUCED" in html or "NOT REPRODUCED" in html


def test_the_site_builds_from_the_committed_data_alone(tmp_path: Path) -> None:
    result = _build(tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    committed = load_run(list_runs(REPO / "data" / RECIPE)[-1])
    html = _page_text(tmp_path / "html")
    assert committed.run_id in html
    assert committed.profile["name"] == "full"
    for subject in committed.subjects:
        for cell in subject.cells:
            assert fmt_rps(summarize(cell).rps_median) in html


def test_a_broken_data_file_is_a_warning_naming_it_not_a_traceback(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(REPO / "data", data)
    run_file = list_runs(data / RECIPE)[-1] / "run.json"
    run_file.write_text("{broken")
    result = _build(tmp_path, "--data-dir", str(data))
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert f"WARNING: {run_file}: not valid JSON" in output
    assert "Traceback" not in output


def test_ctrl_c_mid_run_stops_every_server_and_keeps_no_run(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    process = subprocess.Popen([*INVOKE, "recipe", RECIPE, "--profile", "full", "--data-dir", str(data_dir)],
                               cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        for line in process.stderr:  # wait until load is running
            if "rep 1/5" in line:
                break
        children = psutil.Process(process.pid).children(recursive=True)
        ports = [c.laddr.port for child in children for c in child.net_connections("tcp") if c.status == "LISTEN"]
        assert len(ports) == 2
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert "interrupted: servers stopped, no run directory kept" in stderr
    assert "Traceback" not in stderr
    assert not any(child.is_running() and child.status() != psutil.STATUS_ZOMBIE for child in children)
    assert all(port_is_free(port) for port in ports)
    assert list((data_dir / RECIPE).iterdir()) == []
