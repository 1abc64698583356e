"""A release sweep's run read release by release: each release's figures, its raw ÷ framework ratios, each
claim's verdict on its copies, and the releases that changed against the newest one."""

from __future__ import annotations

from dataclasses import dataclass

from benchsite.model.run import RunDocument
from benchsite.model.variant import VariantRecord
from benchsite.results.claims import Verdict
from benchsite.results.comparing import compare_copies
from benchsite.results.intervals import Interval
from benchsite.results.published import Published
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
    """One subject and cell of a release against another (the newest, or the one before it) in one currency: the
    release's ÷ the other's, and whether it changed by the one rule an A/B run's sides are judged by
    (`comparing.compare_copies`)."""

    release: str
    subject: str
    cell: str
    ratio: Interval
    against: str
    changed: bool


def releases_of(run: RunDocument, published: Published | None) -> list[Release]:
    """The releases a sweep run measured, in the profile's order, each with its copies and verdicts (as the run
    records its variants)."""
    if run.variants is None or not run.variants.sweep:
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
    simultaneous over all of them (Bonferroni), so "changed" keeps its 5 % error for the whole list."""
    return _timed(view, _against_reference(view, releases), subjects, cells)


def step_changes(view: RunView, releases: list[Release], subjects: list[str], cells: list[str]) -> list[Change]:
    """Each release against the one before it, round by round, simultaneous over every step."""
    return _timed(view, list(zip(releases[1:], releases[:-1], strict=True)), subjects, cells)


def reference_release(view: RunView, releases: list[Release]) -> Release | None:
    """The release every other is compared with (`VariantSet.reference`: the newest), None where it is not among
    those given."""
    variants = view.run.variants
    return next((r for r in releases if variants is not None and r.variant.name == variants.reference), None)


def _against_reference(view: RunView, releases: list[Release]) -> list[tuple[Release, Release]]:
    """(release, the reference release) for every other release given."""
    reference = reference_release(view, releases)
    return [] if reference is None else [(r, reference) for r in releases if r is not reference]


def _timed(
    view: RunView, compared: list[tuple[Release, Release]], subjects: list[str], cells: list[str]
) -> list[Change]:
    """Each (release, other) pair's req/s ratio, release ÷ other, by the A/B rule, simultaneous over them all."""
    return [change for kind, change in _compared(view, compared, subjects, cells) if kind == "time"]


def work_changes_against_newest(view: RunView, releases: list[Release], subjects: list[str]) -> list[Change]:
    """Every other release's instructions per request against the newest release's, in every counted cell, batch
    by batch (see batch_ratio); simultaneous over all of them, as the timed changes are."""
    return _worked(view, _against_reference(view, releases), subjects)


def work_steps(view: RunView, releases: list[Release], subjects: list[str]) -> list[Change]:
    """Each release's instructions per request against the release before it, simultaneous over every step."""
    return _worked(view, list(zip(releases[1:], releases[:-1], strict=True)), subjects)


def _worked(view: RunView, compared: list[tuple[Release, Release]], subjects: list[str]) -> list[Change]:
    """Each (release, other) pair's instructions per request, release ÷ other, in every counted cell, by the A/B
    rule, simultaneous over them all."""
    return [change for kind, change in _compared(view, compared, subjects, None) if kind == "work"]


def _compared(
    view: RunView, compared: list[tuple[Release, Release]], subjects: list[str], cells: list[str] | None
) -> list[tuple[str, Change]]:
    """Every (release, other) pair of copies compared by `compare_copies`, in each currency it measured."""
    pairs: list[tuple[str, str, str]] = []
    names: dict[tuple[str, str], tuple[str, str]] = {}
    for newer, older in compared:
        for subject in subjects:
            mine, theirs = newer.copy(subject), older.copy(subject)
            if mine and theirs:
                pairs.append((subject, theirs, mine))  # the other is the reference: release ÷ other
                names[theirs, mine] = (newer.release, older.release)
    found: list[tuple[str, Change]] = []
    for cell in compare_copies(view, pairs, cells):
        release, other = names[cell.a, cell.b]
        if cell.time is not None:
            found.append(
                (
                    "time",
                    Change(
                        release=release,
                        subject=cell.subject,
                        cell=cell.cell,
                        ratio=cell.time,
                        against=other,
                        changed=cell.time_changed,
                    ),
                )
            )
        if cell.work is not None:
            found.append(
                (
                    "work",
                    Change(
                        release=release,
                        subject=cell.subject,
                        cell=cell.cell,
                        ratio=cell.work,
                        against=other,
                        changed=cell.work_changed,
                    ),
                )
            )
    return found
