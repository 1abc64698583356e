"""What a release sweep found, told in sentences: the oldest release against the newest, in time and in work;
runs of consecutive releases that stall in the same cells, told as one story with the upstream report where one
is recorded; and every other step between consecutive releases that changed, as factors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import HttpUrl, ValidationError

from benchsite.errors import BenchError
from benchsite.records import Record, Seq, Text, describe, read_toml
from benchsite.results.change_words import fmt_spans, rounds_one_way_said, signed_percent, whole_percent
from benchsite.results.factors import (
    FASTER,
    MORE_INSTRUCTIONS,
    Direction,
    factor,
    factor_range,
    fmt_level,
    with_range,
)
from benchsite.results.intervals import paired_rounds
from benchsite.results.releases import (
    Change,
    Release,
    changes_against_newest,
    reference_release,
    step_changes,
    work_changes_against_newest,
    work_steps,
)
from benchsite.results.view import RunView

FAR_SLOWER = 0.1  # a release whose median req/s in a cell is under a tenth of the newest's stalls there
UPSTREAM_FILE = "upstream.toml"
MAX_UPSTREAM_BYTES = 1 << 20  # a list of reports, never data: read only below this size


class UpstreamReport(Record):
    """An upstream report of something a sweep finds, kept beside the recipe's data (`upstream.toml`)."""

    package: str
    first: str  # the first release the report names as affected
    title: Text
    report: HttpUrl
    fix: HttpUrl | None = None


class UpstreamReports(Record):
    reports: Seq[UpstreamReport] = ()


def upstream_reports(recipe_dir: Path) -> tuple[UpstreamReport, ...]:
    """The recipe's recorded upstream reports (none where it keeps no upstream.toml); a broken file is one line
    naming it and the key."""
    path = recipe_dir / UPSTREAM_FILE
    if path.is_symlink():
        raise BenchError(f"{path}: a link, which is never followed: keep the file itself beside the recipe's data")
    if not path.is_file():
        return ()
    if (size := path.stat().st_size) > MAX_UPSTREAM_BYTES:
        raise BenchError(
            f"{path}: {size:,} bytes, over the {MAX_UPSTREAM_BYTES:,} a list of upstream reports may have: "
            "keep titles and addresses only"
        )
    try:
        return UpstreamReports.model_validate(read_toml(path)).reports
    except ValidationError as error:
        raise BenchError(describe(error, UpstreamReports, path)) from None


@dataclass(frozen=True)
class Stall:
    """Consecutive releases whose subject is far slower (FAR_SLOWER) than the newest in the same cells."""

    subject: str
    releases: tuple[str, ...]
    cells: tuple[str, ...]
    rates: tuple[tuple[float, float], ...]  # per cell: the first release's median req/s, its ms a request
    keepalive: bool  # every cell it stalls in keeps connections alive (ab -k)


@dataclass(frozen=True)
class Story:
    """The sentences a sweep section opens with, in reading order, and the upstream reports they name."""

    sentences: tuple[str, ...]
    reports: tuple[UpstreamReport, ...]


@dataclass(frozen=True)
class Sweep:
    """One sweep run as its story reads it: the view, its releases, the subjects and cells it compares."""

    view: RunView
    releases: list[Release]
    subjects: list[str]
    cells: list[str]
    package: str

    def median(self, release: Release, subject: str, cell: str) -> float | None:
        summary = self.view.summaries.get((release.copy(subject) or "", cell))
        return summary.median() if summary else None

    @property
    def newest(self) -> Release:
        """The release the others are compared with (the run's reference)."""
        found = reference_release(self.view, self.releases)
        assert found is not None, "a sweep's reference is one of its releases"
        return found

    def subject_named(self, subject: str) -> str:
        """A base subject as its newest copy's label names it, without the release: "CherryPy framework"."""
        newest = self.newest
        label = self.view.run.subject_labels.get(newest.copy(subject) or "", subject)
        return " ".join(label.replace(newest.release, "").split())

    def cell_named(self, cell: str) -> str:
        return self.view.run.cell_label(cell)


def stalls(sweep: Sweep) -> list[Stall]:
    """Runs of consecutive releases far slower than the newest in the same cells, subject by subject."""
    newest, found = sweep.newest, []
    for subject in sweep.subjects:
        slow: list[tuple[str, ...]] = []
        for release in sweep.releases:
            cells = []
            for cell in sweep.cells:
                mine, best = sweep.median(release, subject, cell), sweep.median(newest, subject, cell)
                if mine and best and mine < FAR_SLOWER * best:
                    cells.append(cell)
            slow.append(tuple(cells))
        start = 0
        while start < len(slow):
            end = start
            while slow[start] and end + 1 < len(slow) and slow[end + 1] == slow[start]:
                end += 1
            if slow[start]:
                found.append(_stall(sweep=sweep, subject=subject, cells=slow[start], first=start, last=end))
            start = end + 1
    return found


def _stall(sweep: Sweep, subject: str, cells: tuple[str, ...], first: int, last: int) -> Stall:
    release = sweep.releases[first]
    record = sweep.view.run.subject(release.copy(subject) or "")
    rates, kept = [], []
    for cell in cells:
        rate = sweep.median(release, subject, cell) or 0.0
        found = record.cell(cell) if record else None
        clients = getattr(found, "concurrency", 1)  # ab's -c
        rates.append((rate, 1000 * clients / rate if rate else 0.0))
        kept.append(getattr(found, "keepalive", False))
    releases = tuple(r.release for r in sweep.releases[first : last + 1])
    return Stall(subject=subject, releases=releases, cells=cells, rates=tuple(rates), keepalive=all(kept))


def told_stall(
    sweep: Sweep, stall: Stall, steps: list[Change], work: list[Change], reports: tuple[UpstreamReport, ...]
) -> str:
    """One stall as one story: its releases, cells and rates, its size against the release before it, whether its
    work changed with it, the release it ends with, and the upstream report where one is recorded."""
    first, last = stall.releases[0], stall.releases[-1]
    span = first if first == last else f"from {first} to {last}"
    cells = ", ".join(sweep.cell_named(cell) for cell in stall.cells)
    on = f"on kept-alive connections ({cells})" if stall.keepalive else f"at {cells}"
    rates = ", ".join(
        f"{rate:,.0f} req/s ({each:,.0f} ms a request) at {sweep.cell_named(cell)}"
        for cell, (rate, each) in zip(stall.cells, stall.rates, strict=True)
    )
    said = f"{span[:1].upper()}{span[1:]}, the {sweep.subject_named(stall.subject)} stalls {on}: {rates}"
    cell = stall.cells[0]
    into = _step(steps, first, stall.subject, cell)
    if into is not None:
        against = f"{into.against} at {sweep.cell_named(cell)}"
        said += f"; {first} is {factor(into.ratio.value)} than {against} {fmt_spans(into.ratio)}"
        worked = next((w for w in work if w.release == first and w.subject == stall.subject), None)
        if worked is not None:
            counted = sweep.cell_named(worked.cell)
            moved = (
                f"changed by {signed_percent(worked.ratio.value)}"
                if worked.changed
                else f"did not change beyond the noise ({signed_percent(worked.ratio.value)})"
            )
            said += f", while its instructions per request (counted at {counted}) {moved}"
    said += _ended(sweep, stall, cell)
    report = next((r for r in reports if r.package == sweep.package and r.first in stall.releases), None)
    if report is not None:
        said += f". Reported upstream as “{report.title}” ({report.report}" + (
            f"; the fix: {report.fix})" if report.fix else ")"
        )
    return said + "."


def _rounds_one_way(sweep: Sweep, change: Change, subject: str) -> str:
    """Where every paired round of an unsettled comparison went one way: "faster in 6 of 6 rounds at -c 1 -k, by
    1.17× to 1.35×" ("" where the rounds went both ways)."""
    release = next((r for r in sweep.releases if r.release == change.release), None)
    top, bottom = release.copy(subject) if release else None, sweep.newest.copy(subject)
    if top is None or bottom is None:
        return ""
    a = sweep.view.round_values(top, change.cell, usable_only=False)
    b = sweep.view.round_values(bottom, change.cell, usable_only=False)
    ratios = paired_rounds(a, b) if a is not None and b is not None else []
    return rounds_one_way_said(ratios, sweep.cell_named(change.cell))


def _ended(sweep: Sweep, stall: Stall, cell: str) -> str:
    """The release after a stall against the last one before it (the story's one reference): ". 8.4.8 ends it:
    against 8.0.0, the last release before it, 1.32× slower (95 %: …)" ("" where the sweep has no release after it
    or none before it)."""
    names = [r.release for r in sweep.releases]
    first, last = names.index(stall.releases[0]), names.index(stall.releases[-1])
    if last + 1 >= len(names) or first == 0:
        return ""
    after, before = sweep.releases[last + 1], sweep.releases[first - 1]
    ratio = sweep.view.ratio(
        (after.copy(stall.subject) or "", cell), (before.copy(stall.subject) or "", cell), usable_only=False
    )
    if ratio is None or not ratio.bounded:
        return ""
    assert ratio.low is not None and ratio.high is not None
    where = f"against {before.release}, the last release before it, at {sweep.cell_named(cell)}"
    if ratio.low > 1 or ratio.high < 1:
        return f". {after.release} ends it: {where}, {with_range(ratio)}"
    return f". {after.release} ends it: {where}, not surely different ({fmt_level(ratio)}: {factor_range(ratio)})"


def _step(steps: list[Change], release: str | None, subject: str, cell: str) -> Change | None:
    return next((s for s in steps if s.release == release and s.subject == subject and s.cell == cell), None)


def told_ends(sweep: Sweep, time: list[Change], work: list[Change]) -> str:
    """The oldest release against the newest, subject by subject, in time and (where counted) in work."""
    oldest, newest = sweep.releases[0].release, sweep.newest.release
    parts = []
    for subject in sweep.subjects:
        timed = [c for c in time if c.release == oldest and c.subject == subject]
        beyond = [c for c in timed if c.changed]
        said = f"the {sweep.subject_named(subject)} of {oldest} is " + (
            ", ".join(
                f"{factor(c.ratio.value)} than {newest}'s at {sweep.cell_named(c.cell)} {fmt_spans(c.ratio)}"
                for c in beyond
            )
            or f"not surely faster or slower than {newest}'s"
        )
        level = [c for c in timed if not c.changed]
        if beyond and level:
            said += f", not surely different at {', '.join(sweep.cell_named(c.cell) for c in level)}"
        one_way = [told for c in level if (told := _rounds_one_way(sweep, c, subject))]
        if one_way:
            said += f" (though {'; '.join(one_way)}: the interval, held together with every other comparison, "
            said += "still spans no change)"
        worked = [c for c in work if c.release == oldest and c.subject == subject and c.changed]
        if worked:
            today = ", ".join(
                f"{whole_percent(1 / c.ratio.value, MORE_INSTRUCTIONS)} at {sweep.cell_named(c.cell)}" for c in worked
            )
            said += f"; {newest}'s executes {today}"
        parts.append(said)
    return f"{oldest} against {newest}: " + "; ".join(parts) + "."


def told_steps(sweep: Sweep, steps: list[Change], told: set[tuple[str, str]], words: Direction, currency: str) -> str:
    """The steps that changed between consecutive releases in one currency, pair by pair (those a stall's story
    already told left out); work steps in percent, the smallest (under SMALL_WORK) counted, not named."""
    other = "other " if told else ""
    beyond = [s for s in steps if s.changed and (s.release, s.subject) not in told]
    work = words is MORE_INSTRUCTIONS
    small = [s for s in beyond if work and abs(s.ratio.value - 1) < SMALL_WORK]
    shown = [s for s in beyond if s not in small]
    if not beyond:
        return f"In {currency}, no {other}step between consecutive releases changed."
    if not shown:
        count = f"{len(small)} step{'s' * (len(small) != 1)}"
        return f"In {currency}, {count} between consecutive releases changed, each under {SMALL_WORK:.0%}."
    by_pair: dict[tuple[str, str], list[Change]] = {}
    for step in shown:
        by_pair.setdefault((step.against, step.release), []).append(step)
    several = len(sweep.subjects) > 1
    named = [
        f"{before} → {after}: "
        + ", ".join(
            f"{'the ' + sweep.subject_named(s.subject) + ' ' if several else ''}"
            f"{whole_percent(s.ratio.value, words) if work else factor(s.ratio.value, words)} "
            f"at {sweep.cell_named(s.cell)}"
            for s in found
        )
        for (before, after), found in by_pair.items()
    ]
    said = f"In {currency}, every {other}step between consecutive releases that changed: {'; '.join(named)}"
    if small:
        said += f" (and {len(small)} real step{'s' * (len(small) != 1)} under {100 * SMALL_WORK:.0f} %)"
    return said + "."


SMALL_WORK = 0.02  # a step in instructions per request under 2 %: real (counted exactly) but not named


def story(sweep: Sweep, reports: tuple[UpstreamReport, ...]) -> Story:
    """The sentences a sweep section opens with, generated from its run."""
    releases, subjects, cells = sweep.releases, sweep.subjects, sweep.cells
    time = changes_against_newest(sweep.view, releases, subjects, cells)
    work = work_changes_against_newest(sweep.view, releases, subjects)
    steps = step_changes(sweep.view, releases, subjects, cells)
    worked_steps = work_steps(sweep.view, releases, subjects)
    sentences = []  # the stalls first: the largest steps a sweep can find
    told: set[tuple[str, str]] = set()
    named: list[UpstreamReport] = []
    for stall in stalls(sweep):
        sentences.append(told_stall(sweep=sweep, stall=stall, steps=steps, work=worked_steps, reports=reports))
        names = [r.release for r in releases]
        after = names.index(stall.releases[-1]) + 1
        told |= {(stall.releases[0], stall.subject)} | (
            {(names[after], stall.subject)} if after < len(names) else set()
        )
        named += [r for r in reports if r.package == sweep.package and r.first in stall.releases]
    sentences.append(told_ends(sweep, time, work))
    sentences.append(
        told_steps(sweep=sweep, steps=steps, told=told, words=FASTER, currency="time (req/s, round by round)")
    )
    if worked_steps:
        words = "work (instructions per request, batch by batch)"
        sentences.append(
            told_steps(sweep=sweep, steps=worked_steps, told=set(), words=MORE_INSTRUCTIONS, currency=words)
        )
    return Story(tuple(sentences), tuple(dict.fromkeys(named)))
