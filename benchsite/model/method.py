"""Records of the method's own experiments: which stored runs belong to which arm.

data/method/NAME.toml lists run ids, never figures: the pages recompute every number from the runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from benchsite.model.run import RunId
from benchsite.records import InnerPath, Name, Record, Seq, Text

METHOD_DIR = "method"
METHOD_FORMAT_VERSION = 1


class RunSet(Record):
    """Runs of one recipe stored under data/<data_dir>/<recipe>/."""

    label: Text
    recipe: Name
    data_dir: InnerPath | Literal["."] = "."  # relative to data/
    runs: Seq[RunId] = Field(min_length=1)

    def run_dirs(self, data_dir: Path) -> list[Path]:
        base = data_dir if self.data_dir == "." else data_dir / self.data_dir
        return [base / self.recipe / run_id for run_id in self.runs]


class MethodRecord(Record):
    """One experiment of the method: its question and the run sets that answer it."""

    format_version: Literal[1]
    title: Text
    question: Text
    sets: Seq[RunSet] = Field(min_length=1)
    # Settings its command chose while making the runs (never a figure a page shows), for a resumed run to go on.
    made_with: dict[Name, float] = Field(default_factory=dict)
