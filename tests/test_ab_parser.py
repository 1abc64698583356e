"""The ab parser on real reports of several ab versions (seed pages and this machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsite.tools.ab import AbParseError, AbResult, build_argv, parse_ab_output
from conftest import FIXTURES

AB = FIXTURES / "ab"

# file -> fields the report states (read off the file by eye, one line each)
CASES: dict[str, dict[str, object]] = {
    "ab-2.3-r1430300-cherrypy-test1.txt": dict(
        ab_version="2.3",
        server_software="CherryPy/3.2.4",
        server_port=8080,
        document_length_bytes=2,
        concurrency=1,
        time_taken_s=2.414,
        complete_requests=1000,
        failed_requests=0,
        keepalive_requests=None,
        total_transferred_bytes=126000,
        html_transferred_bytes=2000,
        requests_per_s=414.19,
        time_per_request_ms=2.414,
        time_per_request_all_ms=2.414,
        transfer_rate_kbytes_s=50.96,
    ),
    "ab-2.3-r1430300-cherrypy-test3.txt": dict(
        concurrency=10,
        requests_per_s=376.99,
        time_per_request_ms=26.526,
        time_per_request_all_ms=2.653,
    ),
    "ab-2.3-r1430300-cherrypy-test7.txt": dict(
        server_software="sylvain-laptop",
        keepalive_requests=0,
        requests_per_s=1008.08,
    ),
    "ab-2.0.40-dev-django-apache.txt": dict(
        ab_version="2.0.40-dev",
        server_software="Apache/2.2.3",
        server_hostname="leemelo.com",
        document_path="/feeds/",
        document_length_bytes=13803,
        concurrency=50,
        time_taken_s=6.581932,
        complete_requests=200,
        requests_per_s=30.39,
        time_per_request_ms=1645.483,
        transfer_rate_kbytes_s=417.05,
    ),
    "ab-2.0.40-dev-django-cherokee.txt": dict(server_software="Cherokee", requests_per_s=89.0),
    "ab-win32-cherokee-0.5.4-static.txt": dict(
        ab_version=None,
        document_length_bytes=67859,
        complete_requests=1000000,
        failed_requests=5,
        failed_connect=5,
        failed_length=0,
        failed_exceptions=0,
        total_transferred_bytes=-681476736,
        transfer_rate_kbytes_s=-110.68,
        requests_per_s=166.31,
    ),
    # ab 2.0.x's clock: "8875.62500 seconds" is 8875 s and 62,500 µs unpadded; every derived line agrees with it
    "ab-win32-cherokee-0.5.4-scgi.txt": dict(
        document_length_bytes=693, requests_per_s=112.68, failed_connect=5, time_taken_s=8875.0625
    ),
    "ab-2.3-win-wsgiboost-page-waitress.txt": dict(
        ab_version=None,
        server_software="waitress",
        document_length_bytes=12,
        requests_per_s=950.16,
        write_errors=0,
    ),
    "ab-2.3-win-wsgiboost-page-cherrypy.txt": dict(server_software="0.0.0.0", requests_per_s=92.63),
    "ab-2.3-debian12-cheroot-c10-k.txt": dict(
        ab_version="2.3",
        server_software="Cheroot/11.1.2",
        keepalive_requests=1000,
        requests_per_s=3690.5,
    ),
    "ab-2.3-debian12-length-failures.txt": dict(
        failed_requests=200,
        failed_connect=0,
        failed_receive=0,
        failed_length=200,
        failed_exceptions=0,
    ),
    "ab-2.3-debian12-variable-length.txt": dict(document_length_bytes=None, failed_requests=0),
    "ab-2.3-debian12-non-2xx.txt": dict(non_2xx_responses=300, keepalive_requests=300, failed_requests=0),
    # Cut by -t against a server answering in 50 ms (10 threads), beside eight busy processes: ab had counted
    # the bodies of 9 (and 2) replies whose requests the time limit ended before they were counted complete.
    "ab-2.3-debian12-cut-by-t-9-bodies.txt": dict(
        concurrency=10, document_length_bytes=5, complete_requests=340, html_transferred_bytes=1745
    ),
    "ab-2.3-debian12-cut-by-t-2-bodies.txt": dict(complete_requests=333, html_transferred_bytes=1675),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_parses_the_fields_each_report_states(name: str) -> None:
    result = parse_ab_output((AB / name).read_text())
    for field, expected in CASES[name].items():
        assert getattr(result, field) == expected, field


@pytest.mark.parametrize("path", sorted(AB.glob("*.txt")), ids=lambda p: p.name)
def test_reads_every_recorded_report_with_its_tables(path: Path) -> None:
    result = parse_ab_output(path.read_text())
    assert result.percentiles_ms[0][0] == 50 and result.percentiles_ms[-1][0] == 100
    assert result.total_ms.max_ms == result.response_time_ms(100)
    assert AbResult.from_json(result.to_json(), path) == result


@pytest.mark.parametrize(
    ("html", "said"),
    [
        (1700 + 5 * 10 + 1, "51 bytes more, where a run cut by -t leaves at most 50"),
        (1695, "5 bytes less"),
    ],
)
def test_bodies_beyond_one_per_connection_or_short_of_the_count_are_refused(html: int, said: str) -> None:
    """A -t cut leaves at most one uncounted body per connection (10 × 5 bytes here), never fewer bytes than
    the complete requests' bodies: beyond either, no real ab printed it."""
    report = (AB / "ab-2.3-debian12-cut-by-t-9-bodies.txt").read_text()
    for edge in (1700, 1750):  # the complete requests' bodies, and one more for each of the 10 connections
        assert parse_ab_output(report.replace("1745 bytes", f"{edge} bytes")).html_transferred_bytes == edge
    with pytest.raises(AbParseError, match=said):
        parse_ab_output(report.replace("1745 bytes", f"{html} bytes"))


def test_reads_the_connection_times_table_row_by_row() -> None:
    result = parse_ab_output((AB / "ab-2.3-r1430300-cherrypy-test3.txt").read_text())
    assert (result.connect_ms.min_ms, result.connect_ms.mean_ms, result.connect_ms.sd_ms) == (0, 2, 44.7)
    assert (result.processing_ms.median_ms, result.processing_ms.max_ms) == (17, 406)
    assert result.waiting_ms.sd_ms == 33.7
    assert result.total_ms.max_ms == 1020
    assert dict(result.percentiles_ms) == {50: 17, 66: 19, 75: 20, 80: 21, 90: 23, 95: 25, 98: 31, 99: 286, 100: 1020}


def test_keepalive_is_honoured_only_when_every_request_reused_a_connection() -> None:
    honoured = parse_ab_output((AB / "ab-2.3-r1430300-cherrypy-test2.txt").read_text())
    refused = parse_ab_output((AB / "ab-2.3-r1430300-cherrypy-test7.txt").read_text())
    without_k = parse_ab_output((AB / "ab-2.3-r1430300-cherrypy-test1.txt").read_text())
    assert honoured.keepalive_honoured is True
    assert refused.keepalive_honoured is False
    assert without_k.keepalive_honoured is None


FULL = (AB / "ab-2.3-r1430300-cherrypy-test1.txt").read_text()


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ("", "no 'server software' line"),
        (
            "Benchmarking 127.0.0.1 (be patient)...apr_pollset_poll: The timeout specified has expired (70007)\n",
            "no 'server software' line",
        ),
        (FULL.split("Percentage of the requests")[0], "no complete 'Percentage of the requests served' table"),
        (FULL.split("Connection Times")[0], "no 'Connect:' row"),
        (FULL.replace("Requests per second:    414.19 [#/sec] (mean)\n", ""), "no 'requests per s' line"),
        (FULL.replace("Failed requests:        0", "Failed requests:        3"), "no '(Connect: ..., Length: ...)'"),
        (FULL.rsplit("  99%", 1)[0], "no complete 'Percentage"),
    ],
    ids=[
        "empty",
        "stalled",
        "cut-before-percentiles",
        "cut-before-connection-times",
        "no-rps",
        "failures-without-breakdown",
        "percentiles-cut-before-100",
    ],
)
def test_rejects_incomplete_reports_with_a_one_line_reason(report: str, message: str) -> None:
    with pytest.raises(AbParseError) as caught:
        parse_ab_output(report)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_builds_a_bounded_argv_with_keepalive_and_variable_length() -> None:
    argv = build_argv(
        url="http://127.0.0.1:8080/",
        requests=1000,
        concurrency=10,
        keepalive=True,
        socket_timeout_s=30,
        variable_length=True,
    )
    assert argv == ["ab", "-k", "-l", "-s", "30", "-n", "1000", "-c", "10", "http://127.0.0.1:8080/"]
    assert "-t" not in argv  # -t would silently set -n 50000
