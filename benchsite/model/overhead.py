"""What the harness's own benchmark stores: data/harness-overhead/<run-id>/overhead.json, version 4."""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import Field

from benchsite.model.run import Environment
from benchsite.records import Record, Seq
from benchsite.tools.base import Rate

# 1  the first records; 2  medians derived, not stored; 3  the environment's virtualization;
# 4  the settings' load_cpu (was tool_cpu)
OVERHEAD_FORMAT_VERSION: Literal[4] = 4
OVERHEAD_FILE = "overhead.json"
OVERHEAD_DIR = "harness-overhead"


class OverheadSettings(Record):
    server_cpu: int | None
    load_cpu: int | None


class OverheadRecord(Record):
    """The same ab command run through the harness and bare, interleaved, against one server."""

    format_version: Literal[4]
    recipe: str
    subject: str
    cell: str
    ab_argv: Seq[str] = Field(min_length=1)
    rounds: int = Field(ge=1)
    started_at: str
    finished_at: str
    settings: OverheadSettings
    environment: Environment
    harness_rps: Seq[Rate] = Field(min_length=1)
    bare_rps: Seq[Rate] = Field(min_length=1)

    @property
    def harness_rps_median(self) -> float:
        return statistics.median(self.harness_rps)

    @property
    def bare_rps_median(self) -> float:
        return statistics.median(self.bare_rps)

    @property
    def difference_percent(self) -> float:
        return 100.0 * (self.harness_rps_median - self.bare_rps_median) / self.bare_rps_median
