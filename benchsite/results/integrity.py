"""What a run's raw outputs say about it: whether they still parse to the figures its run.json holds, and
what a run is known by.

A run's identity is what it measured, whatever its folder, its id or its files' bytes: a run copied under
another id, or with a blank added to a report, has the same figures, and counting it twice would narrow
every pooled interval with a run that never happened. So the digest is taken over what the parsers read
(each repetition's parsed figures; where nothing parsed, its lines without trailing blanks), and one
machine cannot have started two runs at the same moment.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from benchsite.errors import BenchError
from benchsite.model.run import RUN_FILE, RunDocument
from benchsite.results.clocks import clock_disagreement
from benchsite.tools import parse_report
from benchsite.tools.memory import parse_readings


@dataclass(frozen=True)
class ReadBack:
    """A run's raw outputs read again: where they disagree with run.json or with themselves, and the digest
    of what was read (None where the run names no raw output: a run in which nothing was measured has no
    content to be told by)."""

    mismatches: list[str]
    content_digest: str | None


def read_back(run: RunDocument) -> ReadBack:
    """Parse every raw output the run names once: each must parse to the result stored beside it (each
    tool's parser also checks that a report agrees with itself) and agree with the clocks the harness kept
    around it (results/clocks.py), and the run is known by what was read
    (each repetition's parsed figures; where nothing parsed, its lines without trailing blanks, carriage
    returns or trailing empty lines)."""
    problems, read = [], {}
    for _, cell in run.every_cell():
        for rep in cell.repetitions:
            text = run.raw_text(rep)
            try:
                again = parse_report(cell.tool, text)
            except BenchError as error:
                read[rep.raw_output] = "\n".join(line.rstrip() for line in text.splitlines()).rstrip("\n")
                if rep.result is not None:
                    problems.append(f"{rep.raw_output}: {error}")
                continue
            read[rep.raw_output] = again.model_dump_json()
            if rep.result is not None and again != rep.result:
                problems.append(f"{rep.raw_output}: parses to other figures than {RUN_FILE} holds")
            elif (clocks := clock_disagreement(run, rep, again)) is not None:
                problems.append(f"{rep.raw_output}: {clocks}")
    problems += memory_disagreements(run)
    if not read:
        return ReadBack(problems, None)
    each = sorted(hashlib.sha256(figures.encode()).hexdigest() for figures in read.values())
    return ReadBack(problems, hashlib.sha256("\n".join(each).encode()).hexdigest())


def memory_disagreements(run: RunDocument) -> list[str]:
    """The memory readings files the run names whose peak is not the one run.json holds (or that do not read as
    readings): memory is checked against its files as figures are against the raw outputs."""
    kept = [(rep.memory_output, rep.server_memory) for _, cell in run.every_cell() for rep in cell.repetitions]
    kept += [(subject.idle_memory_output, subject.idle_memory) for subject in run.subjects]
    problems = []
    for path, peak in kept:
        if path is None:
            continue
        try:
            found = parse_readings(run.inner_text(path, "memory readings"))
        except BenchError as error:
            problems.append(f"{path}: {error}")
            continue
        if found != peak:
            problems.append(f"{path}: its readings peak at other figures than {RUN_FILE} holds")
    return problems


def reparse_mismatches(run: RunDocument) -> list[str]:
    """The repetitions whose raw output no longer parses to the result stored beside it, or disagrees with
    itself; none: all agree."""
    return read_back(run).mismatches


def content_digest(run: RunDocument) -> str | None:
    """What the run is known by: the digest of what its parsers read (see `read_back`)."""
    return read_back(run).content_digest


def identities(run: RunDocument, digest: str | None) -> tuple[tuple[str, ...], ...]:
    """The keys a run is known by (`digest` is its content_digest): its machine with the moment it started,
    and its measured figures. Two runs sharing either are one run."""
    started = ("started", run.machine.id, run.started_at)
    return (started, ("figures", digest)) if digest is not None else (started,)


def duplicate_error(copy: RunDocument, original: RunDocument) -> BenchError:
    """The one line that refuses a run that is another under a new id."""
    if copy.machine.id == original.machine.id and copy.started_at == original.started_at:
        why = f"started by the same machine at the same moment ({copy.started_at})"
    else:
        why = "the same measured figures"
    return BenchError(
        f"{copy.path}: {why} as run {original.run_id} (a copy under another id): a run counts once; remove the copy"
    )
