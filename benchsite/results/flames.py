"""py-spy's collapsed stacks read back: which Python functions a server's samples were in."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

FLAME_DIR = "flame"
WALLCLOCK_DIR = "wallclock"  # the same files, sampled with idle threads: where the wall-clock time goes
SAMPLE_RATE = 200  # py-spy's samples a second
STACK_LINE = re.compile(r"^(?P<stack>.+) (?P<count>\d+)$")


@dataclass(frozen=True)
class FunctionShare:
    """A function (with its file) and the share of all samples whose innermost frame it was."""

    function: str
    share: float


def top_functions(collapsed: str, count: int = 10) -> tuple[int, list[FunctionShare]]:
    """The samples in all, and the `count` functions most often innermost ("function (file)", line numbers
    folded together), from py-spy's raw output: one stack a line, frames split by ';', then its count."""
    by_function: Counter[str] = Counter()
    total = 0
    for line in collapsed.splitlines():
        found = STACK_LINE.match(line.strip())
        if not found:
            continue
        samples = int(found["count"])
        leaf = found["stack"].split(";")[-1].strip()
        by_function[re.sub(r":\d+\)$", ")", leaf)] += samples
        total += samples
    if not total:
        return 0, []
    return total, [FunctionShare(name, n / total) for name, n in by_function.most_common(count)]


@dataclass(frozen=True)
class Flame:
    """One server's recording in one cell: its SVG, its collapsed stacks, or the note saying why neither."""

    subject: str
    cell: str
    svg: Path | None
    stacks: Path | None
    note: str | None


def flames_of(run_dir: Path, kind: str = FLAME_DIR) -> list[Flame]:
    """Every recording a run keeps under flame/ (or wallclock/), by subject and cell (file names: SUBJECT__CELL.*)."""
    folder = run_dir / kind
    stems = sorted({path.name.split(".")[0] for path in folder.glob("*")}) if folder.is_dir() else []
    found = []
    for stem in stems:
        subject, _, cell = stem.partition("__")
        svg, stacks, note = (folder / f"{stem}{suffix}" for suffix in (".svg", ".txt", ".note.txt"))
        found.append(
            Flame(
                subject=subject,
                cell=cell,
                svg=svg if svg.is_file() else None,
                stacks=stacks if stacks.is_file() else None,
                note=note.read_text().strip() if note.is_file() else None,
            )
        )
    return found
