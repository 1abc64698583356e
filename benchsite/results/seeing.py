"""What an A/B run could see: the smallest change a currency would call, where its own figures could show one."""

from __future__ import annotations

import math
from collections.abc import Sequence

# Beyond this (10×) a smallest change the run would call is no change it could see at all.
SEES_NOTHING = 9.0


def could_see(sees: float | None, span: float | None) -> float | None:
    """The smallest change a currency would call, where the run could see one: math.inf where it could see none
    (beyond SEES_NOTHING, or beyond what the cell's own figures reach), None where it gives no spread to tell."""
    if sees is None:
        return None
    limit = SEES_NOTHING if span is None else min(SEES_NOTHING, span)
    return sees if sees < limit else math.inf


def figures_span(figures: Sequence[float]) -> float | None:
    """Its largest figure ÷ its smallest, less 1 (None: fewer than two positive figures)."""
    positive = [figure for figure in figures if figure > 0]
    return max(positive) / min(positive) - 1 if len(positive) >= 2 else None
