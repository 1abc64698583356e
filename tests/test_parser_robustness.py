"""The parsers on damaged reports: each past failure as a fixed case, then mutated and cut real reports.

A parser may return a result only when the report says it; anything else is its own parse error,
never another exception.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchsite.errors import BenchError
from benchsite.tools.ab import AbParseError, parse_ab_output
from benchsite.tools.h2load import H2loadParseError, parse_h2load_output
from benchsite.tools.wrk import WrkParseError, parse_wrk_output
from conftest import FIXTURES

AB_REPORTS = sorted((FIXTURES / "ab").glob("*.txt"))
WRK_REPORT = (FIXTURES / "wrk" / "wrk-4.1.0-cheroot-c10.txt").read_text()
CHEROOT = (FIXTURES / "ab" / "ab-2.3-debian12-cheroot-c10-k.txt").read_text()
H2LOAD_REPORT = (FIXTURES / "h2load" / "h2load-1.52-cheroot-c10.txt").read_text()


def test_a_garbled_wrk_number_is_a_parse_error_not_a_traceback() -> None:
    garbled = WRK_REPORT.replace("Requests/sec:   1770.08", "Requests/sec:   1.770.08")
    assert garbled != WRK_REPORT
    with pytest.raises(WrkParseError, match="no 'Requests/sec' line"):
        parse_wrk_output(garbled)


def test_an_ab_report_cut_inside_its_last_percentile_line_is_refused() -> None:
    cut = CHEROOT[: CHEROOT.index("(longest request)")].rstrip()
    with pytest.raises(AbParseError, match="cut short"):
        parse_ab_output(cut)


def test_a_pasted_report_with_trailing_blanks_reads_like_the_original() -> None:
    padded = "\n".join(line + "   \t" for line in CHEROOT.splitlines())
    assert parse_ab_output(padded) == parse_ab_output(CHEROOT)


def test_wrk2_output_is_named_as_such() -> None:
    # A constructed report in wrk2's layout (an HdrHistogram distribution): no wrk2 is installed here.
    wrk2 = WRK_REPORT.replace("Latency Distribution", "Latency Distribution (HdrHistogram - Recorded Latency)")
    wrk2 = wrk2.replace("     50%", " 50.000%").replace("     75%", " 75.000%").replace("     90%", " 90.000%")
    wrk2 = wrk2.replace("     99%", " 99.000%")
    with pytest.raises(WrkParseError, match="wrk2's report"):
        parse_wrk_output(wrk2)


def _parse_or_own_error(parse, report: str, error: type[BenchError]):  # type: ignore[no-untyped-def]
    try:
        return parse(report)
    except error:
        return None


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(report=st.sampled_from(AB_REPORTS), cut=st.floats(min_value=0.0, max_value=1.0))
def test_a_cut_ab_report_parses_to_the_whole_reports_values_or_fails_cleanly(report: Path, cut: float) -> None:
    text = report.read_text()
    whole = parse_ab_output(text)
    part = _parse_or_own_error(parse_ab_output, text[: int(len(text) * cut)], AbParseError)
    assert part is None or part == whole


@PROPERTY
@given(
    report=st.sampled_from(AB_REPORTS),
    where=st.floats(min_value=0.0, max_value=0.999),
    junk=st.text(alphabet="0123456789.-%: x\n", min_size=1, max_size=4),
)
def test_an_ab_report_with_junk_inside_parses_or_fails_with_abs_own_error(
    report: Path, where: float, junk: str
) -> None:
    text = report.read_text()
    at = int(len(text) * where)
    _parse_or_own_error(parse_ab_output, text[:at] + junk + text[at:], AbParseError)


@PROPERTY
@given(cut=st.floats(min_value=0.0, max_value=1.0))
def test_a_cut_wrk_report_parses_to_the_whole_reports_values_or_fails_cleanly(cut: float) -> None:
    part = _parse_or_own_error(parse_wrk_output, WRK_REPORT[: int(len(WRK_REPORT) * cut)], WrkParseError)
    assert part is None or part == parse_wrk_output(WRK_REPORT)


@PROPERTY
@given(
    where=st.floats(min_value=0.0, max_value=0.999),
    junk=st.text(alphabet="0123456789.-%: kKMBmsu\n", min_size=1, max_size=4),
)
def test_a_wrk_report_with_junk_inside_parses_or_fails_with_wrks_own_error(where: float, junk: str) -> None:
    at = int(len(WRK_REPORT) * where)
    _parse_or_own_error(parse_wrk_output, WRK_REPORT[:at] + junk + WRK_REPORT[at:], WrkParseError)


@PROPERTY
@given(cut=st.floats(min_value=0.0, max_value=1.0))
def test_a_cut_h2load_report_parses_to_the_whole_reports_values_or_fails_cleanly(cut: float) -> None:
    part = _parse_or_own_error(parse_h2load_output, H2LOAD_REPORT[: int(len(H2LOAD_REPORT) * cut)], H2loadParseError)
    assert part is None or part == parse_h2load_output(H2LOAD_REPORT)


@PROPERTY
@given(
    where=st.floats(min_value=0.0, max_value=0.999),
    junk=st.text(alphabet="0123456789.-%: kKMBmsu()\n", min_size=1, max_size=4),
)
def test_an_h2load_report_with_junk_inside_parses_or_fails_with_its_own_error(where: float, junk: str) -> None:
    at = int(len(H2LOAD_REPORT) * where)
    _parse_or_own_error(parse_h2load_output, H2LOAD_REPORT[:at] + junk + H2LOAD_REPORT[at:], H2loadParseError)
