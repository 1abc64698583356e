"""Where a slow release's time goes while its server is not on the CPU: from a sweep run that sampled each
release's server by wall clock (py-spy with idle threads, under wallclock/), set against the last release before
it that was at least twice as fast.

Two figures: how much of each request the server spent off the CPU (one minus its CPU time per request over the
time per request, both from the run's timed repetitions), and the innermost function whose share of the wall-clock
samples grew most from the release before (idle worker threads wait alike in both, so they cancel out).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchsite.model.run import RunDocument
from benchsite.results.flames import STACK_LINE, WALLCLOCK_DIR, flames_of, top_functions
from benchsite.results.releases import Release, releases_of
from benchsite.results.store import list_runs, load_run

# How many functions of each recording are compared: the innermost frames that hold nearly every sample.
COMPARED = 40


@dataclass(frozen=True)
class Waiting:
    """One release against the release before it, in one cell."""

    run_id: str
    subject: str  # the base subject ("raw-wsgi")
    release: str
    before: str
    cell: str
    per_request_ms: float  # median wall time per request
    cpu_per_request_ms: float  # the server's median CPU time per request
    function: str  # the innermost function whose share of samples grew most
    share: float  # of this release's wall-clock samples
    share_before: float  # of the release before's
    thread_share: float  # of the samples of the thread that spent the most of its time there

    @property
    def waiting(self) -> float:
        """The share of each request the server spent off the CPU."""
        return max(0.0, 1 - self.cpu_per_request_ms / self.per_request_ms)


def _medians(run: RunDocument, copy: str, cell: str) -> tuple[float, float] | None:
    """(wall ms per request, server CPU ms per request), medians over the counted repetitions."""
    subject = run.subject(copy)
    found = subject.cell(cell) if subject is not None else None
    reps = [rep for rep in found.repetitions if rep.counted and rep.result] if found is not None else []
    if not reps:
        return None
    wall = statistics.median(rep.result.time_per_request_ms for rep in reps)  # type: ignore[union-attr]
    cpu = statistics.median((rep.per_request_us(rep.server_cpu_s) or 0.0) / 1000 for rep in reps)
    return wall, cpu


def _shares(stacks: Path) -> dict[str, float]:
    _, functions = top_functions(stacks.read_text(), COMPARED)
    return {each.function: each.share for each in functions}


def thread_share(stacks: Path, function: str) -> float:
    """The largest share of one thread's samples (py-spy --threads: each stack opens with its thread) whose
    innermost frame is `function`."""
    in_thread: Counter[str] = Counter()
    there: Counter[str] = Counter()
    for line in stacks.read_text().splitlines():
        found = STACK_LINE.match(line.strip())
        if not found:
            continue
        frames = found["stack"].split(";")
        count = int(found["count"])
        in_thread[frames[0]] += count
        if re.sub(r":\d+\)$", ")", frames[-1].strip()) == function:
            there[frames[0]] += count
    return max((there[thread] / in_thread[thread] for thread in there), default=0.0)


def waiting_in(run: RunDocument) -> list[Waiting]:
    """Each release against the nearest earlier release of the run that took at most half its time per request
    (the last one before a stall), in every cell both were sampled by wall clock."""
    recorded = {(flame.subject, flame.cell): flame.stacks for flame in flames_of(run.path, WALLCLOCK_DIR)}
    releases = releases_of(run, None)
    found = []
    for index, release in enumerate(releases):
        for subject, copy in release.copies.items():
            for (sampled, cell), stacks in recorded.items():
                times = _medians(run, copy, cell) if sampled == copy else None
                if times is None or stacks is None:
                    continue
                before = _faster_before(
                    run=run,
                    earlier=releases[:index],
                    subject=subject,
                    cell=cell,
                    per_request_ms=times[0],
                    recorded=recorded,
                )
                if before is None:
                    continue
                stacks_before = recorded[(before.copy(subject) or "", cell)]
                shares, shares_before = _shares(stacks), _shares(stacks_before)  # type: ignore[arg-type]
                if not shares:
                    continue
                function = max(shares, key=lambda name: shares[name] - shares_before.get(name, 0.0))
                found.append(
                    Waiting(
                        run_id=run.run_id,
                        subject=subject,
                        release=release.release,
                        before=before.release,
                        cell=cell,
                        per_request_ms=times[0],
                        cpu_per_request_ms=times[1],
                        function=function,
                        share=shares[function],
                        share_before=shares_before.get(function, 0.0),
                        thread_share=thread_share(stacks, function),
                    )
                )
    return found


def _faster_before(
    run: RunDocument,
    earlier: list[Release],
    subject: str,
    cell: str,
    per_request_ms: float,
    recorded: dict[tuple[str, str], Path | None],
) -> Release | None:
    """The nearest earlier release sampled in the cell whose time per request was at most half this one's."""
    for release in reversed(earlier):
        copy = release.copy(subject)
        times = _medians(run, copy, cell) if copy is not None and recorded.get((copy, cell)) else None
        if times is not None and times[0] <= per_request_ms / 2:
            return release
    return None


def newest_waiting(recipe_dir: Path, package: str) -> list[Waiting]:
    """From the newest run of the recipe that sampled a sweep of `package` by wall clock (empty: none did)."""
    for path in reversed(list_runs(recipe_dir)):
        if not (path / WALLCLOCK_DIR).is_dir():
            continue
        run = load_run(path)
        if run.variants is not None and run.variants.package == package:
            return waiting_in(run)
    return []
