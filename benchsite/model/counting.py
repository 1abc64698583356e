"""Exact work per request: what a profile asks to count and what a run stores of the count.

After the timed rounds, each server subject is started once more under Valgrind's callgrind with
instrumentation off, warmed up, then counted over fixed batches of requests: instrumentation is
switched on before a batch and off after it from outside (callgrind's monitor commands, sent by
`vgdb`), and each batch's instructions are read from the dump it makes. Instructions do not move
with the machine's load or speed, so a ratio of them needs no timing to be trusted.
"""

from __future__ import annotations

import statistics
from typing import ClassVar

from pydantic import Field

from benchsite.records import Name, Record, Seq, Text
from benchsite.tools.base import Count, Positive


class CountPlan(Record):
    """[profiles.NAME.counting]: which cells to count, in how many batches of how many requests."""

    cells: Seq[Name] = Field(min_length=1)  # each counted with its own load-tool argv
    # Count at this concurrency instead of the cell's own (None: the cell's): one request at a time, an
    # evented or threaded server does the same work for every request; at -c 10 it serves a varying number
    # of them per wake-up, and its batches' counts spread by several per cent.
    concurrency: int | None = Field(ge=1, le=1000)
    batches: int = Field(ge=3, le=50)  # per start
    requests: int = Field(ge=10, le=100_000)  # per batch (under callgrind a server serves ~40-100 req/s)
    # Each server counted in this many starts, each with the hash seed of the run's timed start of that number
    # (cycling), `batches` batches in each (1: one start).
    starts: int = Field(ge=1, le=20)
    warmup_requests: int = Field(ge=0, le=100_000)

    # A conservative pace under callgrind (the cherrypy-speed framework serves about 40 req/s), for a server
    # whose timed pace is not known yet (`budget.counting_s`).
    SLOWEST_RPS: ClassVar[float] = 30.0


class FlamePlan(Record):
    """[flame] in a recipe's conf: a py-spy flame graph of each Python server, recorded by PID under a load
    window of its own after the timed rounds (the files go to flame/ in the run; run.json is unchanged)."""

    profiles: Seq[Name] = Field(min_length=1)  # the profiles that record them (full: what the site shows)
    cells: Seq[Name] = Field(min_length=1)  # each cell's own load command makes the load
    seconds: int = Field(ge=1, le=60)  # of sampling, per subject and cell


class CountedBatch(Record):
    """One counted batch: its requests, the instructions the server's processes ran for them, its wall time."""

    requests: Count
    instructions: Count
    wall_s: Positive

    @property
    def per_request(self) -> float:
        return self.instructions / self.requests


class InstructionCount(Record):
    """One subject's count in one cell: the batches (start by start, in order), or why there are none."""

    subject: Name
    cell: Name
    argv: Seq[str]  # one batch's load command
    batches: Seq[CountedBatch]
    error: str | None  # why the count is missing or cut short (the subject's timed results are kept)

    @property
    def per_request(self) -> float | None:
        """The median of the batches' instructions per request (None without batches)."""
        return statistics.median(b.per_request for b in self.batches) if self.batches and not self.error else None

    @property
    def spread(self) -> float | None:
        """The largest distance of a batch from the median, as a share of the median."""
        median = self.per_request
        if median is None:
            return None
        return max(abs(b.per_request - median) for b in self.batches) / median


class Counting(Record):
    """A run's instruction counts: the counter, and each subject's count; or why the run counted nothing."""

    counter: Text  # "valgrind-3.19.0 callgrind"
    skipped: str | None  # why nothing was counted (the profile asks for none, no valgrind...)
    counts: Seq[InstructionCount]

    def of(self, subject: str, cell: str) -> InstructionCount | None:
        return next((c for c in self.counts if c.subject == subject and c.cell == cell), None)
