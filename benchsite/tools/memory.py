"""What a server held in memory, as a run stores it: USS and PSS summed over its process tree, every reading
kept in a file beside the raw outputs (one line a reading) and its peak in run.json, which must agree."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import Field, ValidationError, model_validator

from benchsite.errors import BenchError
from benchsite.records import Record

# Every process keeps at least one page of its own resident (its stack): a tree's USS is never below a page each.
PAGE_BYTES = 4096
READINGS_HEADER = "benchsite memory readings 1: USS bytes, PSS bytes, processes (one reading of the tree a line)"
_READING = re.compile(r"(\d{1,16}) (\d{1,16}) (\d{1,6})")


@dataclass(frozen=True)
class MemorySample:
    """One reading of a process tree."""

    uss_bytes: int
    pss_bytes: int
    processes: int


class MemoryPeak(Record):
    """The highest memory a server's process tree held over some samples (one sample: the idle reading)."""

    uss_bytes: int = Field(ge=0, le=10**15)  # pages only its processes map
    pss_bytes: int = Field(ge=0, le=10**15)  # its processes' share of every page they map
    processes: int = Field(ge=1, le=100_000)  # processes in the tree (the most seen)
    samples: int = Field(ge=1)

    @model_validator(mode="after")
    def _pss_holds_uss(self) -> MemoryPeak:
        if self.pss_bytes < self.uss_bytes:  # PSS is USS plus a share of every shared page
            raise ValueError(f"PSS ({self.pss_bytes:,} B) below USS ({self.uss_bytes:,} B): no process tree reads so")
        if self.uss_bytes < PAGE_BYTES * self.processes:
            raise ValueError(
                f"USS ({self.uss_bytes:,} B) below one {PAGE_BYTES:,}-byte page for each of its {self.processes} "
                "processes: no process tree reads so"
            )
        return self

    def far_below(self, idle: MemoryPeak) -> bool:
        """Whether this peak under load is below half the tree's idle reading in USS or PSS: a server may give
        back some of what it held at start (meinheld's lowest peak in the committed runs is 94 % of its idle
        USS), never most of it while it serves."""
        return self.uss_bytes < idle.uss_bytes / 2 or self.pss_bytes < idle.pss_bytes / 2

    @property
    def uss_mib(self) -> float:
        return self.uss_bytes / 2**20

    @property
    def pss_mib(self) -> float:
        return self.pss_bytes / 2**20


def as_peak(samples: list[MemorySample]) -> MemoryPeak | None:
    """The highest USS and PSS among samples (each its own maximum), and how many samples there were."""
    if not samples:
        return None
    return MemoryPeak(
        uss_bytes=max(sample.uss_bytes for sample in samples),
        pss_bytes=max(sample.pss_bytes for sample in samples),
        processes=max(sample.processes for sample in samples),
        samples=len(samples),
    )


def readings_text(samples: list[MemorySample]) -> str:
    """The file of a tree's readings, as a run keeps it beside its raw outputs."""
    lines = [READINGS_HEADER, *(f"{s.uss_bytes} {s.pss_bytes} {s.processes}" for s in samples)]
    return "\n".join(lines) + "\n"


def parse_readings(text: str) -> MemoryPeak:
    """The peak of a readings file; a BenchError naming the first line that is not a plausible reading."""
    lines = text.splitlines()
    if not lines or lines[0] != READINGS_HEADER:
        raise BenchError("not a memory readings file (its first line is not the header)")
    samples = []
    for number, line in enumerate(lines[1:], start=2):
        match = _READING.fullmatch(line)
        if match is None:
            raise BenchError(f"line {number} {line[:60]!r} is not a reading (USS, PSS, processes)")
        sample = MemorySample(*(int(group) for group in match.groups()))
        if sample.pss_bytes < sample.uss_bytes or not sample.processes:
            raise BenchError(f"line {number} {line!r} cannot be a reading: PSS below USS, or no process")
        if sample.uss_bytes < PAGE_BYTES * sample.processes:
            raise BenchError(f"line {number} {line!r} cannot be a reading: USS below one page for each process")
        samples.append(sample)
    try:
        peak = as_peak(samples)
    except ValidationError as error:
        raise BenchError(f"an impossible reading ({error.errors()[0]['msg']})") from None
    if peak is None:
        raise BenchError("a memory readings file with no reading")
    return peak
