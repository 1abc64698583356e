"""The h2load parser on reports of the real h2load (nghttp2 1.52, Debian 12) recorded here."""

from __future__ import annotations

import pytest

from benchsite.tools import parse_report
from benchsite.tools.h2load import H2loadCell, H2loadParseError, parse_h2load_output
from conftest import FIXTURES

H2LOAD = FIXTURES / "h2load"
CHEROOT = (H2LOAD / "h2load-1.52-cheroot-c10.txt").read_text()


def test_reads_every_figure_of_a_report() -> None:
    result = parse_h2load_output(CHEROOT)
    assert result.application_protocol == "http/1.1"
    assert (result.duration_s, result.requests_per_s) == (1.05, 1897.37)
    assert result.transfer_bytes_per_s == pytest.approx(255.70 * 1024)
    assert (result.requests_total, result.requests_done, result.requests_succeeded) == (2000, 2000, 2000)
    assert (result.status_2xx, result.non_2xx_responses, result.failed_requests) == (2000, 0, 0)
    assert (result.traffic_total_bytes, result.traffic_headers_bytes, result.traffic_data_bytes) == (
        276000,
        182000,
        24000,
    )
    assert (result.request_ms_min, result.request_ms_max) == (pytest.approx(0.109), 7.26)
    assert (result.request_ms_mean, result.request_ms_sd) == (pytest.approx(0.553), pytest.approx(0.339))
    assert (result.connect_ms_mean, result.first_byte_ms_mean) == (301.46, 302.68)
    assert result.complete_requests == 2000 and result.time_per_request_ms == pytest.approx(0.553)
    assert result.percentiles_ms == () and result.keepalive_honoured is None
    assert type(result).from_json(result.to_json(), "stored") == result
    assert parse_report("h2load", CHEROOT) == result


def test_answers_other_than_2xx_are_counted_apart_from_failures() -> None:
    result = parse_h2load_output((H2LOAD / "h2load-1.52-http-server-404.txt").read_text())
    assert (result.requests_done, result.status_4xx, result.requests_failed) == (200, 200, 200)
    assert result.non_2xx_responses == 200 and result.failed_requests == 0


def test_a_refused_connection_is_a_report_of_errored_requests() -> None:
    result = parse_h2load_output((H2LOAD / "h2load-1.52-refused.txt").read_text())
    assert result.application_protocol is None
    assert (result.complete_requests, result.failed_requests, result.requests_per_s) == (0, 50, 0.0)
    assert result.duration_s == pytest.approx(175e-6)


@pytest.mark.parametrize(
    ("line", "missing"),
    [
        ("finished in", "'finished in' line"),
        ("requests:", "'requests:' line"),
        ("status codes:", "'status codes:' line"),
        ("traffic:", "'traffic:' line"),
        ("time for request:", "'time for request' row"),
        ("req/s ", "'req/s' row"),
    ],
)
def test_a_report_without_one_of_its_lines_names_it(line: str, missing: str) -> None:
    without = "\n".join(text for text in CHEROOT.splitlines() if not text.startswith(line))
    with pytest.raises(H2loadParseError, match=missing):
        parse_h2load_output(without)


def test_rejects_empty_output() -> None:
    with pytest.raises(H2loadParseError, match="no 'finished in' line"):
        parse_h2load_output("")


def test_a_cell_builds_a_bounded_http_1_1_argv_and_names_itself() -> None:
    cell = H2loadCell.model_validate({"tool": "h2load", "clients": 10})
    assert (cell.name, cell.label, cell.concurrency, cell.keepalive) == ("h2load-c10", "h2load -c 10", 10, True)
    assert cell.argv("http://127.0.0.1:1/", 5000, "h2load", 7) == [
        "h2load",
        "--h1",
        "-n",
        "5000",
        "-c",
        "10",
        "-t",
        "1",
        "-N",
        "7s",
        "http://127.0.0.1:1/",
    ]
