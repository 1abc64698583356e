"""The harness's own benchmark, read back: its req/s over bare ab's, round by round."""

from __future__ import annotations

from benchsite.model.overhead import OverheadRecord
from benchsite.results.intervals import Interval, ratio_interval


def harness_over_bare(record: OverheadRecord) -> Interval | None:
    """The harness's req/s over bare ab's, paired round by round, with its interval (None below two rounds)."""
    return ratio_interval([h / b for h, b in zip(record.harness_rps, record.bare_rps, strict=False)])
