"""A release sweep's run read release by release: each release's figures, its raw ÷ framework ratios, each
claim's verdict on its copies, and the releases that differ significantly from the newest one."""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.model.run import RunDocument
from benchsite.model.variant import VariantRecord
from benchsite.results.claims import Verdict
from benchsite.results.intervals import Interval, paired_rounds, ratio_interval, simultaneous_level
from benchsite.results.published import Published
from benchsite.results.versus import batch_ratio, batches
from benchsite.results.view import RunView


@dataclass(frozen=True)
class Release:
    """One release of a sweep run: its copies of the base subjects, what it ran and what they gave."""

    release: str
    variant: VariantRecord
    verdicts: tuple[Verdict, ...]

    @property
    def copies(self) -> dict[str, str]:
        """Base subject -> its copy's name in the run."""
        return dict(self.variant.copies)

    def copy(self, subject: str) -> str | None:
        return self.variant.copies.get(subject)


@dataclass(frozen=True)
class Change:
    """One subject and cell of a release against another (the newest, or the one before it): the paired ratio,
    the release's ÷ the other's, and whether it is significant (its simultaneous interval misses 1)."""

    release: str
    subject: str
    cell: str
    ratio: Interval
    against: str = ""

    @property
    def significant(self) -> bool:
        return self.ratio.bounded and not (self.ratio.low or 0.0) <= 1.0 <= (self.ratio.high or 0.0)


def releases_of(run: RunDocument, published: Published | None) -> list[Release]:
    """The releases a sweep run measured, in the profile's order, each with its copies and verdicts (as the run
    records its variants)."""
    if run.variants is None or run.variants.purpose != "sweep":
        return []
    found = [
        Release(version, variant, ())
        for version, variant in zip(run.profile.releases, run.variants.variants, strict=True)
    ]
    if published is None:
        return found
    view = RunView(run)
    decided = []
    for each in found:
        claims = published.for_copies({each.variant.name: each.copies})
        decided.append(Release(each.release, each.variant, tuple(claims.verdicts(view))))
    return decided


def changes_against_newest(
    view: RunView, releases: list[Release], subjects: list[str], cells: list[str]
) -> list[Change]:
    """Every other release's subject and cell against the newest release's, round by round; the intervals are
    simultaneous over all of them (Bonferroni), so "significant" keeps its 5 % error for the whole list."""
    if len(releases) < 2:
        return []
    return _timed(view, [(r, releases[-1]) for r in releases[:-1]], subjects, cells)


def step_changes(view: RunView, releases: list[Release], subjects: list[str], cells: list[str]) -> list[Change]:
    """Each release against the one before it, round by round, simultaneous over every step."""
    return _timed(view, list(zip(releases[1:], releases[:-1], strict=True)), subjects, cells)


def _timed(
    view: RunView, compared: list[tuple[Release, Release]], subjects: list[str], cells: list[str]
) -> list[Change]:
    """Each (release, other) pair's req/s ratio, release ÷ other, round by round, simultaneous over them all."""
    pairs = [(r, o, s, c) for r, o in compared for s in subjects for c in cells if r.copy(s) and o.copy(s)]
    level = simultaneous_level(len(pairs))
    changes = []
    for release, other, subject, cell in pairs:
        top = view.round_values(release.copy(subject) or "", cell)
        bottom = view.round_values(other.copy(subject) or "", cell)
        if top is None or bottom is None:
            continue
        ratio = ratio_interval(paired_rounds(top, bottom), level)
        if ratio is not None:
            changes.append(Change(release.release, subject, cell, ratio, other.release))
    return changes


def work_changes_against_newest(view: RunView, releases: list[Release], subjects: list[str]) -> list[Change]:
    """Every other release's instructions per request against the newest release's, in every counted cell, batch
    by batch (see batch_ratio); simultaneous over all of them, as the timed changes are."""
    if len(releases) < 2:
        return []
    return _worked(view, [(r, releases[-1]) for r in releases[:-1]], subjects)


def work_steps(view: RunView, releases: list[Release], subjects: list[str]) -> list[Change]:
    """Each release's instructions per request against the release before it, simultaneous over every step."""
    return _worked(view, list(zip(releases[1:], releases[:-1], strict=True)), subjects)


def _worked(view: RunView, compared: list[tuple[Release, Release]], subjects: list[str]) -> list[Change]:
    """Each (release, other) pair's instructions per request, release ÷ other, batch by batch, in every counted
    cell, simultaneous over them all."""
    counting = view.run.counting
    if counting is None:
        return []
    cells = list(dict.fromkeys(count.cell for count in counting.counts))
    pairs = [
        (r, o, s, c)
        for r, o in compared
        for s in subjects
        for c in cells
        if batches(view, r.copy(s), c) and batches(view, o.copy(s), c)
    ]
    level = simultaneous_level(len(pairs))
    changes = []
    for release, other, subject, cell in pairs:
        ratio = batch_ratio(batches(view, other.copy(subject), cell), batches(view, release.copy(subject), cell), level)
        if ratio is not None:
            changes.append(Change(release.release, subject, cell, ratio, other.release))
    return changes
