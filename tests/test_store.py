"""Run directories: round trip, format version, nothing half-written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsite.ab import parse_ab_output
from benchsite.errors import BenchError
from benchsite.store import (
    FORMAT_VERSION,
    RUN_FILE,
    Repetition,
    latest_run,
    list_runs,
    load_run,
    repetition_to_dict,
    staged_run_directory,
    write_json,
)
from conftest import FIXTURES

REPORT = (FIXTURES / "ab" / "ab-2.3-debian12-cheroot-c10-k.txt").read_text()


def _document(raw_output: str) -> dict:
    rep = Repetition(1, ("ab", "-k", "-n", "1000"), 0, False, raw_output, 0.3, 0.1, 0.2,
                     parse_ab_output(REPORT), None)
    failed = Repetition(2, ("ab", "-k"), 119, False, "raw/s/c10-k/rep-2.txt", 5.0, 0.0, 0.0, None,
                        "ab exited with code 119: apr_pollset_poll: The timeout specified has expired (70007)")
    return {
        "format_version": FORMAT_VERSION, "recipe": "r", "title": "T", "run_id": "20260101T000000Z-quick",
        "profile": {"name": "quick", "requests": 1000, "repetitions": 2, "warmup_requests": 0},
        "started_at": "a", "finished_at": "b", "settings": {"server_cpu": 0, "tool_cpu": 1},
        "environment": {"cpu_model": "x"}, "warmups": [],
        "subjects": [{
            "name": "s", "label": "S", "argv": ["python", "s.py"], "server_software": "Cheroot/11.1.2",
            "verification": {"status": 200}, "cells": [{
                "name": "c10-k", "label": "-c 10 -k", "tool": "ab", "concurrency": 10, "keepalive": True,
                "requests": 1000, "repetitions": [repetition_to_dict(rep), repetition_to_dict(failed)],
            }],
        }],
    }


def test_a_stored_run_reads_back_with_the_values_of_its_raw_output(tmp_path: Path) -> None:
    run_dir = tmp_path / "r" / "20260101T000000Z-quick"
    (run_dir / "raw").mkdir(parents=True)
    (run_dir / "raw" / "rep-1.txt").write_text(REPORT)
    write_json(run_dir / RUN_FILE, _document("raw/rep-1.txt"))
    run = load_run(run_dir)
    ok, failed = run.subjects[0].cells[0].repetitions
    assert ok.result == parse_ab_output(run.raw_text(ok))
    assert ok.server_cpu_us_per_request == pytest.approx(0.2 * 1e6 / 1000)
    assert failed.result is None and failed.exit_code == 119 and not failed.ok
    assert json.loads((run_dir / RUN_FILE).read_text()) == _document("raw/rep-1.txt")


def test_an_unknown_format_version_says_what_to_do(tmp_path: Path) -> None:
    document = _document("raw/rep-1.txt") | {"format_version": FORMAT_VERSION + 1}
    (tmp_path / "run").mkdir()
    write_json(tmp_path / "run" / RUN_FILE, document)
    with pytest.raises(BenchError, match="update the harness"):
        load_run(tmp_path / "run")


def test_broken_json_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / RUN_FILE).write_text("{not json")
    with pytest.raises(BenchError, match=r"run\.json: not valid JSON"):
        load_run(tmp_path / "run")


def test_an_interrupted_run_leaves_no_directory(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), staged_run_directory(tmp_path, "20260101T000000Z-full") as staging:
        (staging / "raw").mkdir()
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_a_finished_run_is_renamed_into_place_and_never_overwritten(tmp_path: Path) -> None:
    with staged_run_directory(tmp_path, "20260101T000000Z-full") as staging:
        write_json(staging / RUN_FILE, {"x": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["20260101T000000Z-full"]
    with pytest.raises(BenchError, match="already exists"), staged_run_directory(tmp_path, "20260101T000000Z-full"):
        pass
    assert list_runs(tmp_path) == [tmp_path / "20260101T000000Z-full"]


def test_the_latest_run_is_the_newest_run_id(tmp_path: Path) -> None:
    for run_id in ("20260102T000000Z-full", "20260101T000000Z-full", ".incomplete-20260103T000000Z-full"):
        (tmp_path / run_id).mkdir()
        (tmp_path / run_id / RUN_FILE).write_text("{}")
    assert latest_run(tmp_path) == tmp_path / "20260102T000000Z-full"
