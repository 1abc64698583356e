"""What a server held in memory, as a run stores it: USS and PSS summed over its process tree."""

from __future__ import annotations

from pydantic import Field, model_validator

from benchsite.records import Record


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
        return self

    @property
    def uss_mib(self) -> float:
        return self.uss_bytes / 2**20

    @property
    def pss_mib(self) -> float:
        return self.pss_bytes / 2**20
