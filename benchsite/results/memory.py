"""What each server of a run held in memory: once started (idle), and at its peak (the highest reading of all,
the idle one and every counted repetition's in any cell, USS and PSS each), summed over its process tree; and,
where a cell held many connections open at once, what each connection added."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from benchsite.model.run import RunDocument, SubjectRun
from benchsite.tools.base import Repetition
from benchsite.tools.memory import MemoryPeak

MIB = 2**20
# A cell holds enough connections to tell what one adds where it has at least this many clients at once.
MANY_CONNECTIONS = 100
IDLE_CELL = "once started"  # where the peak was read when no load's reading went above the idle one


@dataclass(frozen=True)
class MemoryFigures:
    """One server's memory."""

    subject: str
    label: str
    idle: MemoryPeak | None
    peak: MemoryPeak | None  # the highest USS and the highest PSS read, the idle reading's included: never below it
    peak_cell: str | None  # the cell of the highest USS (IDLE_CELL: the idle reading's)
    per_connection_kib: float | None  # (median peak USS in the busiest cell - idle USS) ÷ its clients
    connections: int | None  # that cell's clients

    @property
    def growthmib_said(self) -> float | None:
        """How much more it held at its peak than once started."""
        if self.idle is None or self.peak is None:
            return None
        return (self.peak.uss_bytes - self.idle.uss_bytes) / MIB


def _reps(subject: SubjectRun, run: RunDocument) -> list[tuple[str, Repetition[Any]]]:
    """(cell label, repetition) of every counted repetition with a memory reading, latency cells included."""
    found = [(cell.label, rep) for cell in subject.cells for rep in cell.repetitions]
    latency = run.latency.of(subject.name) if run.latency is not None else None
    if latency is not None:
        found += [(load.cell.label, rep) for load in latency.loads for rep in load.cell.repetitions]
    return [(label, rep) for label, rep in found if rep.counted and rep.server_memory is not None]


def _highest(idle: MemoryPeak, readings: list[tuple[str, MemoryPeak]]) -> tuple[MemoryPeak, str]:
    """The highest USS and the highest PSS of every reading, the idle one included, and the cell of the highest
    USS: a reading under load below the idle one (a server that returned memory once it served) is no peak."""
    every = [(IDLE_CELL, idle), *readings]
    cell, top = max(every, key=lambda pair: pair[1].uss_bytes)
    peak = MemoryPeak(
        uss_bytes=top.uss_bytes,
        pss_bytes=max(reading.pss_bytes for _, reading in every),
        processes=max(reading.processes for _, reading in every),
        samples=sum(reading.samples for _, reading in every),
    )
    return peak, cell


def _per_connection(subject: SubjectRun) -> tuple[float | None, int | None]:
    """What each connection added in the cell with the most clients at once (None: under MANY_CONNECTIONS)."""
    busiest = max(subject.cells, key=lambda cell: cell.concurrency, default=None)
    if busiest is None or busiest.concurrency < MANY_CONNECTIONS or subject.idle_memory is None:
        return None, None
    peaks = [rep.server_memory.uss_bytes for rep in busiest.repetitions if rep.counted and rep.server_memory]
    if not peaks:
        return None, None
    added = statistics.median(peaks) - subject.idle_memory.uss_bytes
    return added / busiest.concurrency / 1024, busiest.concurrency


def memory_figures(run: RunDocument) -> list[MemoryFigures]:
    """Every server of the run that recorded its memory (none before run format 14); a backend (the Django
    application behind the SCGI servers) once started alone: no load is aimed at it, so it has no peak."""
    figures = []
    for subject in run.subjects:
        if subject.role == "client" or subject.idle_memory is None:
            continue
        readings = [(cell, rep.server_memory) for cell, rep in _reps(subject, run) if rep.server_memory is not None]
        peak, peak_cell = _highest(subject.idle_memory, readings) if readings else (None, None)
        per_connection, connections = _per_connection(subject)
        figures.append(
            MemoryFigures(
                subject=subject.name,
                label=subject.label,
                idle=subject.idle_memory,
                peak=peak,
                peak_cell=peak_cell,
                per_connection_kib=per_connection,
                connections=connections,
            )
        )
    return figures


def fmt_mib(reading: MemoryPeak | None) -> str:
    """A reading in MiB, one decimal (— where none)."""
    return "—" if reading is None else f"{reading.uss_bytes / MIB:,.1f} MiB"
