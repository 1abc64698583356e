"""The wrk parser on reports recorded here."""

from __future__ import annotations

import re

import pytest

from benchsite.results.metrics import fmt_latency
from benchsite.tools.wrk import WrkParseError, build_argv, parse_wrk_output
from conftest import FIXTURES

WRK = FIXTURES / "wrk"


def test_reads_every_figure_of_a_latency_report() -> None:
    result = parse_wrk_output((WRK / "wrk-4.1.0-cheroot-c10.txt").read_text())
    assert (result.threads, result.connections, result.duration_s) == (1, 10, 2.0)
    assert (result.complete_requests, result.requests_per_s) == (3561, 1770.08)
    assert result.bytes_read == round(441.89 * 1024)
    assert result.transfer_bytes_per_s == pytest.approx(219.65 * 1024)
    assert (result.latency_ms_mean, result.latency_ms_stdev, result.latency_ms_max) == (4.21, 2.65, 18.84)
    assert dict(result.percentiles_ms) == {50: 3.69, 75: 5.75, 90: 7.73, 99: 12.83}
    assert (result.failed_requests, result.non_2xx_responses) == (0, 0)
    assert type(result).from_json(result.to_json(), "stored") == result


def test_reads_socket_errors_and_non_2xx_answers() -> None:
    result = parse_wrk_output((WRK / "wrk-4.1.0-errors.txt").read_text())
    assert (
        result.failed_requests
        == (
            result.socket_errors_connect
            + result.socket_errors_read
            + result.socket_errors_write
            + result.socket_errors_timeout
        )
        > 0
    )
    assert result.non_2xx_responses > 0


def test_rejects_a_report_without_the_latency_distribution() -> None:
    report = (WRK / "wrk-4.1.0-cheroot-c10.txt").read_text()
    without = "\n".join(line for line in report.splitlines() if not re.match(r"\s+\d+%\s", line))
    with pytest.raises(WrkParseError, match="run wrk with --latency"):
        parse_wrk_output(without)


def test_rejects_empty_output() -> None:
    with pytest.raises(WrkParseError, match=r"no 'Running \.\.\. test' line"):
        parse_wrk_output("")


def test_builds_a_bounded_argv() -> None:
    assert build_argv(url="http://127.0.0.1:1/", connections=10, threads=1, duration_s=3, timeout_s=5) == [
        "wrk",
        "--latency",
        "-t",
        "1",
        "-c",
        "10",
        "-d",
        "3s",
        "--timeout",
        "5s",
        "http://127.0.0.1:1/",
    ]


@pytest.mark.parametrize(
    ("ms", "shown"),
    [(0.085, "85 µs"), (0.0, "< 1 ms"), (3.0, "3 ms"), (1.27, "1.27 ms"), (1234.0, "1,234 ms"), (None, "—")],
)
def test_a_latency_shows_the_digits_its_tool_gave(ms: float | None, shown: str) -> None:
    assert fmt_latency(ms) == shown
