"""ab's reports checked as the ab that wrote them computes: ab 2.0.x's unpadded microseconds and whole
kilobytes, ab 2.3's "%.3f" seconds and exact kilobytes, and a pasted report without its version line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchsite.tools.ab import AbParseError, parse_ab_output
from benchsite.tools.ab_arithmetic import AB_20, AB_23, generations
from conftest import FIXTURES

AB_2040 = (FIXTURES / "ab" / "ab-2.0.40-dev-django-apache.txt").read_text()
AB_23_REPORT = (FIXTURES / "ab" / "ab-2.3-r1430300-cherrypy-test1.txt").read_text()

# The genuine ab 2.0.40 report quoted in issue 63 (ab -n 10 -c 2, Apache/2.0.52): its figures set into the
# seed page's real ab 2.0.40 report, line by line.
ISSUE_63_FIGURES = {
    "Document Length": "5 bytes",
    "Concurrency Level": "2",
    "Time taken for tests": "0.375607 seconds",
    "Complete requests": "10",
    "Total transferred": "2660 bytes",
    "HTML transferred": "50 bytes",
    "Requests per second": "26.62 [#/sec] (mean)",
    "Time per request": "75.121 [ms] (mean)",
    "Transfer rate": "5.32 [Kbytes/sec] received",
}


def with_lines(report: str, lines: dict[str, str]) -> str:
    """The report with each named line's value replaced (the first line of that name)."""
    for name, value in lines.items():
        report, count = re.subn(rf"^({re.escape(name)}:\s+).*$", rf"\g<1>{value}", report, count=1, flags=re.M)
        assert count == 1, name
    return report


def issue_63_report(**changed: str) -> str:
    report = with_lines(AB_2040, ISSUE_63_FIGURES | changed)
    across = r"^(Time per request:\s+)[\d.]+( \[ms\] \(mean, across all concurrent requests\))$"
    return re.sub(across, r"\g<1>37.561\g<2>", report, count=1, flags=re.M)


def test_the_issues_ab_2040_report_parses_with_its_whole_kilobyte_transfer_rate() -> None:
    result = parse_ab_output(issue_63_report())
    assert result.ab_version == "2.0.40-dev"
    assert (result.transfer_rate_kbytes_s, result.total_transferred_bytes, result.time_taken_s) == (
        5.32,
        2660,
        0.375607,
    )
    assert result.time_per_request_all_ms == 37.561


@pytest.mark.parametrize(("rate", "off"), [("6.93", "30.1 % more"), ("5.40", "1.41 % more"), ("5.30", "0.464 % less")])
def test_an_ab_2040_transfer_rate_off_by_more_than_its_rounding_says_which_figures_and_by_how_much(
    rate: str, off: str
) -> None:
    """6.93 is what ab 2.3 would print for these bytes: an ab that says it is 2.0.40 never does."""
    with pytest.raises(AbParseError) as raised:
        parse_ab_output(issue_63_report(**{"Transfer rate": f"{rate} [Kbytes/sec] received"}))
    said = str(raised.value)
    assert said.startswith(
        f"ab output disagrees with itself: Transfer rate {float(rate):g} is not Total transferred in whole KB"
    )
    assert f"(2 ÷ 0.375607 = 5.32471, {off}) as ab 2.0.x computes it" in said
    assert "edited" not in said and "\n" not in said


def test_ab_20s_clock_prints_microseconds_unpadded() -> None:
    """ "30.27095 seconds" from ab 2.0.x is 30 s and 27,095 µs: 1028 requests at 34.24 a second."""
    assert AB_20.time_taken("30.27095") is not None and AB_20.time_taken("30.27095").value == pytest.approx(30.027095)
    assert AB_20.time_taken("0.375607").value == pytest.approx(0.375607)
    assert AB_20.time_taken("2.1234567") is None  # never more than six digits of microseconds
    assert AB_23.time_taken("2.414").value == 2.414


def test_a_report_reads_by_its_version_line_else_by_its_time_format() -> None:
    assert generations("2.0.40-dev", "6.581932") == (AB_20,)
    assert generations("2.0.41-dev", "6.581932") == (AB_20,)
    assert generations("2.3", "2.414") == (AB_23,)
    assert generations(None, "2.414") == (AB_23, AB_20)
    assert generations(None, "8875.62500") == (AB_20, AB_23)


def test_a_pasted_report_without_its_version_line_is_read_by_the_generation_its_figures_agree_with() -> None:
    old = issue_63_report().split("\n", 1)[1]  # no "This is ApacheBench" line
    assert "ApacheBench" not in old.splitlines()[0]
    assert parse_ab_output(old).transfer_rate_kbytes_s == 5.32  # ab 2.0.x's arithmetic
    new = AB_23_REPORT.split("\n", 1)[1]
    assert parse_ab_output(new).time_taken_s == 2.414  # ab 2.3's
    with pytest.raises(AbParseError, match=r"Transfer rate 9\.99 is not .* as ab 2\.0\.x computes it"):
        parse_ab_output(with_lines(old, {"Transfer rate": "9.99 [Kbytes/sec] received"}))


def test_an_ab_23_report_is_held_to_exact_kilobytes() -> None:
    """ab 2.3's own report of 126000 bytes in 2.414 s: 50.97 KB/s; ab 2.0.x's whole kilobytes would give 50.95."""
    parse_ab_output(AB_23_REPORT)
    with pytest.raises(AbParseError, match=r"Transfer rate 50\.9 is not Total transferred in KB ÷ Time taken"):
        parse_ab_output(with_lines(AB_23_REPORT, {"Transfer rate": "50.9 [Kbytes/sec] received"}))


@pytest.mark.parametrize("path", sorted((FIXTURES / "ab").glob("*.txt")), ids=lambda path: path.name)
def test_no_refusal_of_a_recorded_report_says_it_was_edited(path: Path) -> None:
    report = path.read_text()
    doubled = re.sub(r"(Requests per second:\s+)([\d.]+)", lambda m: f"{m[1]}{2 * float(m[2]):.2f}", report)
    if doubled == report:
        pytest.skip("a cut report without a rate")
    with pytest.raises(AbParseError) as raised:
        parse_ab_output(doubled)
    assert re.search(r"Requests per second [\d.]+ is not .*, (99\.\d+|100) % more\)", str(raised.value))
    assert "edited" not in str(raised.value)
