"""The open-loop latency profile: what a recipe's conf asks for ([latency]) and what a run stores of it.

After the timed rounds, each server is offered fixed shares of its own capacity (its median req/s in a
closed-loop cell of the same run) by benchsite-paced, on a schedule, for a few seconds a repetition, in
rounds; every repetition is stored as any cell's is (raw output, CPU on both sides, interference, memory).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, field_validator

from benchsite.records import Name, Record, Seq
from benchsite.tools.paced import PacedCellRun

_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s)\s*$")
_TO_MS = {"us": 0.001, "µs": 0.001, "ms": 1.0, "s": 1000.0}
Share = Annotated[float, Field(gt=0, le=2)]


def time_ms(text: str) -> float:
    """ "10 ms", "500 us", "0.2 s" in milliseconds; anything else is a ValueError saying how to write one."""
    match = _TIME.match(text)
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f'{text!r} is not a time: write a positive number and a unit, as "10 ms", "500 us", "0.2 s"')
    return float(match.group(1)) * _TO_MS[match.group(2)]


class LatencyPlan(Record):
    """[profiles.NAME.latency] in a recipe's conf."""

    capacity_cell: Name  # a closed-loop cell: each server's median req/s there is its capacity
    fractions: Seq[Share] = Field(min_length=3)  # the offered loads, as shares of that capacity
    seconds: float = Field(gt=0, le=120)  # of schedule, per repetition
    rounds: int = Field(ge=1, le=50)
    connections: int = Field(ge=1, le=20000)  # kept-alive connections, or at most open (one per request)
    keepalive: bool
    p99_target: str  # "10 ms": a server sustains an offered load whose p99 stays under it
    # The witness's rate (req/s) beside each load: a second sender on the server's CPU (0: none, as before format 17)
    witness_rps: float = Field(default=0, ge=0, le=2000)

    @field_validator("p99_target")
    @classmethod
    def _a_time(cls, value: str) -> str:
        time_ms(value)
        return value

    @field_validator("fractions")
    @classmethod
    def _increasing(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if list(value) != sorted(set(value)):
            raise ValueError(f"{list(value)}: list each share once, from the lowest up")
        return value

    @property
    def p99_target_ms(self) -> float:
        return time_ms(self.p99_target)

    def cell_name(self, fraction: float) -> str:
        return f"paced-{round(100 * fraction)}"


class LoadRun(Record):
    """One subject at one offered load: the share of its capacity and every repetition made there."""

    fraction: float = Field(gt=0)
    cell: PacedCellRun


class SubjectLatency(Record):
    """One subject's profile: the capacity its loads are shares of, and each load's repetitions."""

    subject: Name
    capacity_rps: float = Field(gt=0)  # its median req/s in the capacity cell, this run
    loads: Seq[LoadRun]


class LatencyProfile(Record):
    """The run's latency profile: the plan it followed and every subject measured."""

    plan: LatencyPlan
    subjects: Seq[SubjectLatency]
    skipped: dict[Name, str]  # subjects left out, and why (no capacity measured)

    def of(self, subject: str) -> SubjectLatency | None:
        return next((each for each in self.subjects if each.subject == subject), None)


def plan_from(table: Any) -> Any:
    """A profile's latency table with its defaults filled in."""
    if not isinstance(table, dict):
        return table
    return {"rounds": 3, "connections": 256, "keepalive": False, "seconds": 3, "witness_rps": 200, **table}
