"""The report line of client_bench.py, read back (recorded from a real run here)."""

from __future__ import annotations

import json

import pytest

from benchsite.tools.client import ClientParseError, ClientResult, parse_client_output
from conftest import FIXTURES

REPORT = (FIXTURES / "client" / "requests-reuse-https-1024.txt").read_text()


def test_reads_the_clients_own_timing() -> None:
    data = json.loads(REPORT)
    result = parse_client_output(REPORT)
    assert (result.client, result.mode, result.complete_requests) == ("requests", "reuse", data["requests"])
    assert result.cpu_us_per_request == data["cpu_s"] * 1e6 / data["requests"]
    assert result.requests_per_s == data["requests"] / data["wall_s"]
    assert result.bytes_received == 1024 * data["requests"]
    assert result.versions["requests"] == data["versions"]["requests"]
    assert type(result).from_json(result.to_json(), "stored") == result


def test_failed_requests_do_not_count_as_complete() -> None:
    data = json.loads(REPORT) | {"errors": 3}
    result = parse_client_output(json.dumps(data))
    assert (result.complete_requests, result.failed_requests) == (data["requests"] - 3, 3)


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ("", "printed nothing"),
        ("Traceback (most recent call last):\n", "not JSON"),
        ('{"client": "requests"}', "lacks mode, url, requests"),
    ],
)
def test_rejects_anything_but_a_complete_report(report: str, message: str) -> None:
    with pytest.raises(ClientParseError, match=message):
        parse_client_output(report)


def test_a_client_result_has_no_latency_table() -> None:
    assert ClientResult.from_json(parse_client_output(REPORT).to_json(), "stored").response_time_ms(50) is None
