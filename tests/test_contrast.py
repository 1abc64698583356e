"""Every verdict colour and the inline-code colour meet WCAG AA (4.5:1) on every background they sit on."""

from __future__ import annotations

import re

import pytest
from matplotlib.colors import to_rgb

from conftest import REPO

CSS = (REPO / "docs" / "_static" / "bench.css").read_text()
# The theme's backgrounds under text: the page, the content column, striped table rows, inline code.
BACKGROUNDS = {"page": "#ffffff", "content": "#fcfcfc", "striped row": "#f3f6f6"}


def luminance(colour: str) -> float:
    """WCAG 2.x relative luminance of an sRGB colour."""
    channels = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour)]
    return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]


def contrast(foreground: str, background: str) -> float:
    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


COLOURS = dict(re.findall(r"\.(bench-verdict-[a-z-]+|bench-noise) \{ color: (#[0-9a-f]{6})", CSS))
COLOURS["inline code"] = re.search(r"code\.literal, \.rst-content tt\.literal \{ color: (#[0-9a-f]{6})", CSS)[1]


def test_the_contrast_formula_matches_wcags_own_examples() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#e74c3c", "#ffffff") == pytest.approx(3.82, abs=0.01)  # the theme's code red


def test_every_verdict_state_has_a_colour() -> None:
    from benchsite.results.claims import State

    assert {f"bench-verdict-{state.value.replace(' ', '-')}" for state in State} <= COLOURS.keys()


@pytest.mark.parametrize("name", sorted(COLOURS))
@pytest.mark.parametrize("background", sorted(BACKGROUNDS))
def test_text_colours_meet_wcag_aa(name: str, background: str) -> None:
    assert contrast(COLOURS[name], BACKGROUNDS[background]) >= 4.5, (name, background)
