"""A run's memory readings kept beside its raw outputs: each repetition's readings of its server's tree, and each
subject's idle reading, in files the run names (run.json holds their peaks, checked against them)."""

from __future__ import annotations

from pathlib import Path

from benchsite.harness.processes.memory import PeakSampler
from benchsite.results.store import write_text
from benchsite.tools.memory import MemoryPeak, MemorySample, readings_text


def kept_readings(sampler: PeakSampler | None, peak: MemoryPeak | None, run_dir: Path, raw_output: str) -> str | None:
    """Keep every reading a repetition's sampler took beside its raw output; the file's path in the run folder
    (None where there was no reading)."""
    if sampler is None or peak is None:
        return None
    path = str(Path(raw_output).with_suffix(".memory.txt"))
    write_text(run_dir / path, readings_text(sampler.samples))
    return path


def kept_reading(idle: MemoryPeak | None, run_dir: Path, name: str) -> str | None:
    """Keep a subject's idle reading in its file beside its raw outputs (a start after the first replaces it, as
    its reading replaces the first's); the file's path in the run folder, None where there was no reading."""
    path = f"raw/{name}/idle-memory.txt"
    if idle is None:
        (run_dir / path).unlink(missing_ok=True)
        return None
    write_text(run_dir / path, readings_text([MemorySample(idle.uss_bytes, idle.pss_bytes, idle.processes)]))
    return path
