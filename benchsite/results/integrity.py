"""What a run's raw outputs say about it: whether they still parse to the figures its run.json holds, and
the digest a run is known by.

A run's identity is its content, the raw outputs it was measured with, whatever its folder or id: a run
copied under another id has the same raw outputs, and counting it twice would narrow every pooled interval
with a run that never happened.
"""

from __future__ import annotations

import hashlib
from typing import Any

from benchsite.errors import BenchError
from benchsite.model.run import RUN_FILE, RunDocument
from benchsite.tools import parse_report
from benchsite.tools.base import Repetition


def reparse_mismatches(run: RunDocument) -> list[str]:
    """The repetitions whose raw output no longer parses to the result stored beside it, or disagrees with
    itself (each tool's parser checks that); none: all agree."""
    problems = []
    for subject in run.subjects:
        for cell in subject.cells:
            for rep in cell.repetitions:
                if rep.result is None:
                    continue
                try:
                    again = parse_report(cell.tool, run.raw_text(rep))
                except BenchError as error:
                    problems.append(f"{rep.raw_output}: {error}")
                    continue
                if again != rep.result:
                    problems.append(f"{rep.raw_output}: parses to other figures than {RUN_FILE} holds")
    return problems


def content_digest(run: RunDocument) -> str | None:
    """sha256 over the sorted sha256 of every raw output the run's repetitions name; None where it names
    none (a run in which nothing was measured has no content to be told by)."""
    named: dict[str, Repetition[Any]] = {
        rep.raw_output: rep for subject in run.subjects for cell in subject.cells for rep in cell.repetitions
    }
    if not named:
        return None
    each = sorted(hashlib.sha256(run.raw_text(rep).encode()).hexdigest() for rep in named.values())
    return hashlib.sha256("\n".join(each).encode()).hexdigest()


def duplicate_error(copy: RunDocument, original: RunDocument) -> BenchError:
    """The one line that refuses a run with another's content."""
    return BenchError(
        f"{copy.path}: the same raw outputs as run {original.run_id} (a copy under another id): "
        "a run counts once; remove the copy"
    )
