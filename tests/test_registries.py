"""Each registry entry carries its own presentation, and every place that shows them knows each one."""

from __future__ import annotations

from html import unescape
from pathlib import Path

import pytest

from benchsite.results.claims import State
from benchsite.results.export import COLUMNS
from benchsite.results.machines import overall
from benchsite.results.metrics import METRICS, RPS
from conftest import REPO


def test_every_verdict_state_has_its_colour_in_the_stylesheet_and_a_glossary_line() -> None:
    css = (REPO / "docs" / "_static" / "bench.css").read_text()
    for state in State:
        assert f".{state.css_class} {{" in css, state
        assert state.explained and state.explained != state.value


def test_every_state_is_placed_by_the_across_machines_rule() -> None:
    for state in State:
        assert overall([state]) in State  # no state falls through (the match ends in assert_never)
    assert overall([State.DEPENDS]) == State.INCONCLUSIVE


def test_the_csv_has_a_median_column_for_every_exported_metric_and_none_for_the_others() -> None:
    for name, metric in METRICS.items():
        assert (name in COLUMNS) == metric.exported, name
        assert metric.explained, name


def test_the_results_table_has_a_column_for_every_tabled_metric_and_none_for_the_others() -> None:
    from benchsite.sphinxext.results import BenchResults

    assert BenchResults.headers[2] == RPS.column  # req/s leads, with its link to the raw output and interval
    for metric in (m for m in METRICS.values() if m is not RPS):
        assert (metric.column in BenchResults.headers) == metric.tabled, metric.name


@pytest.mark.integration
def test_the_glossary_lists_every_state_every_metric_and_the_methods_words(committed_site: Path) -> None:
    page = unescape((committed_site / "methodology.html").read_text())
    for state in State:
        assert state.upper() in page and state.explained in page
    for metric in METRICS.values():
        assert f">{metric.name}<" in page and metric.explained in page
    for word in ("disturbed repetition", "measured on a busy machine", "repetition", "round", "cell"):
        assert f">{word}<" in page


def test_the_package_says_the_version_pyproject_says() -> None:
    import tomllib

    from benchsite import __version__

    assert __version__ == tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
