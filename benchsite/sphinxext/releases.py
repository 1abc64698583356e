"""Across a package's releases: the latest release-sweep run of a recipe, release by release (req/s, the
raw ÷ framework ratio, each claim's verdict) in a chart and tables, and which releases changed against the newest
from the newest."""

from __future__ import annotations

import re
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.errors import BenchError
from benchsite.results.claims import fmt_interval
from benchsite.results.design import design_of
from benchsite.results.factors import FASTER, MORE_INSTRUCTIONS, Direction, with_range
from benchsite.results.intervals import Interval, level_label
from benchsite.results.memory import memory_figures
from benchsite.results.metrics import RPS
from benchsite.results.releases import (
    Change,
    Release,
    changes_against_newest,
    reference_release,
    releases_of,
    work_changes_against_newest,
)
from benchsite.results.store import list_runs, load_view
from benchsite.results.sweep_story import Story, Sweep, stalls, story, upstream_reports
from benchsite.results.view import RunView
from benchsite.results.waiting import newest_waiting
from benchsite.sphinxext.base import PublishedDirective, selected
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.claims import verdict_node
from benchsite.sphinxext.nodes import data
from benchsite.sphinxext.release_charts import by_release, change_chart, collapsed
from benchsite.sphinxext.tables import table, with_interval
from benchsite.sphinxext.waiting import waiting_table


class BenchReleases(PublishedDirective):
    """``.. bench-releases::`` (``:profile:`` the sweep's, default sweep; ``:cells:``; ``:base:`` the subject
    ratios divide by, ``:top:`` the one they divide, where the sweep runs two; ``:server:`` the distribution whose
    version each release's row names): the latest sweep run, release by release."""

    option_spec: ClassVar[dict] = {
        **PublishedDirective.option_spec,
        "profile": directives.unchanged,
        "cells": directives.unchanged,
        "top": directives.unchanged_required,
        "base": directives.unchanged_required,
        "server": directives.unchanged_required,
    }

    def render(self) -> list[nodes.Node]:
        profile = self.options.get("profile", "sweep")
        recipe_dir = self.data_dir() / self.recipe
        self.note_runs(recipe_dir)
        runs = list_runs(recipe_dir, profile)
        if not runs:
            command = f".venv/bin/invoke recipe {self.recipe} --profile {profile}"
            return [nodes.paragraph(text=f"No {profile} run of this recipe is stored yet: `{command}` makes one.")]
        view = self.checked(load_view(runs[-1]))
        self.note(view.run.run_file)
        published = self.load_published()
        releases = releases_of(view.run, published)
        if not releases or not any(r.copies for r in releases):
            raise BenchError(f"{view.run.run_file}: profile {profile!r} ran no release copies of the subjects")
        cells = selected(self.options.get("cells"), view.run.cell_names, "cells", view.run.run_file)
        top, base = self.options.get("top"), self.options.get("base")
        assert view.run.variants is not None  # releases_of found them
        subjects = (base, top) if top and base else view.run.variants.subjects
        ratio = []
        if top and base:
            chart = self._ratio_chart(view=view, releases=releases, cells=cells, top=top, base=base)
            ratio.append(collapsed(f"{top} ÷ {base} by release: a chart and a table", chart))
        package = view.run.variants.package or self.options.get("server", "the package")
        sweep = Sweep(view=view, releases=releases, subjects=list(subjects), cells=list(cells), package=package)
        sentences = story(sweep, upstream_reports(recipe_dir))
        found_stalls = stalls(sweep)
        stalled = {release for stall in found_stalls for release in stall.releases}
        waits = [w for w in newest_waiting(recipe_dir, package) if w.release in stalled]
        return [
            told(sentences, self.recipe, view.run.run_id),
            *waiting_table(waits, self.recipe),
            self._about(view, releases),
            *self._changes(view, releases, cells, subjects),
            *self._instructions(view, releases, subjects),
            *_memory(view, releases, subjects),
            collapsed(
                "Median req/s of every release: a chart and a table, with the server each ran",
                self._chart(view, releases, cells, subjects),
                self._figures(view, releases, cells, subjects),
            ),
            *ratio,
            self._verdicts(releases, [claim.id for claim in published.about(releases[0].copies)]),
        ]

    def _about(self, view: RunView, releases: list[Release]) -> nodes.Node:
        run = view.run
        rounds = run.rounds.made if run.rounds else run.profile.rounds
        patched = [r.release for r in releases if _patched(view, r)]
        of_its_time = all(r.variant.resolved_as_of for r in releases)
        beside = (
            "with the dependencies of its time (resolved no newer than its upload)"
            if of_its_time
            else "with the dependencies PyPI offered on the day the environment was made"
        )
        return nodes.paragraph(
            text=f"Run {run.run_id}, started {run.started_at[:16].replace('T', ' ')} UTC on {run.machine.name}: "
            f"{len(releases)} releases, each installed from PyPI into its own environment {beside}, all of them "
            f"measured in the same {rounds} round{'s' * (rounds != 1)} (every release's subjects back to back in each "
            "cell, so that two releases are compared round by round). "
            + design_of(run.profile).sweep_said(view)
            + (
                f"Patched to run on today's Python (the patch is recorded in the run): {', '.join(patched)}."
                if patched
                else "No release needed a patch."
            )
        )

    def _instructions(self, view: RunView, releases: list[Release], subjects: tuple[str, ...]) -> list[nodes.Node]:
        """Instructions per request by release, where the sweep counted them: a line per subject and counted
        cell, exact to its batches' spread, so a step between two releases is real."""
        counting = view.run.counting
        if counting is None or not counting.counts:
            return []
        cells = tuple(dict.fromkeys(count.cell for count in counting.counts))
        series, rows = [], []
        for subject in subjects:
            for cell in cells:
                counts = [counting.of(r.copy(subject) or "", cell) for r in releases]
                values = tuple(c.per_request / 1000 if c and c.per_request else None for c in counts)
                series.append(Series(f"{subject}, {view.run.cell_label(cell)}", values, values, values))
                rows.append((subject, cell, counts))
        chart = by_release(
            view=view,
            releases=releases,
            series=series,
            title="instructions per request by release (counted under callgrind)",
            y_label="thousands of instructions per request",
        )
        headers = ["Release", *(f"{s}, {view.run.cell_label(c)}" for s, c, _ in rows)]
        body = []
        for index, release in enumerate(releases):
            line: list[object] = [release.release]
            for subject, cell, counts in rows:
                count = counts[index]
                shown = "—" if count is None else count.error or "—"
                if count is not None and count.per_request is not None:
                    shown = f"{count.per_request:,.0f} (±{100 * (count.spread or 0):.2f} %)"
                line.append(data(shown, release=release.release, subject=subject, cell=cell, metric="instructions"))
            body.append(line)
        spreads = [c.spread for _, _, counts in rows for c in counts if c is not None and c.spread is not None]
        note = nodes.paragraph(
            text="Instructions per request, counted under callgrind after the timed rounds (each figure the median "
            "of its batches, their largest distance from it in brackets"
            + (f"; at most ±{100 * max(spreads):.2f} % here" if spreads else "")
            + "): unlike the timed lines below, a step between two releases larger than that is real."
        )
        listing = table(headers, body, classes=["bench-releases"])
        return [
            collapsed(
                "Instructions per request by release: exact counts, so a step between two releases is real",
                chart_node(chart, "thousand instructions"),
                note,
                listing,
            )
        ]

    def _chart(
        self, view: RunView, releases: list[Release], cells: tuple[str, ...], subjects: tuple[str, ...]
    ) -> nodes.Node:
        series = []
        for subject in subjects:
            for cell in cells:
                medians = tuple(_median(view, r.copy(subject), cell) for r in releases)
                series.append(Series(f"{subject}, {view.run.cell_label(cell)}", medians, medians, medians))
        chart = by_release(
            view=view,
            releases=releases,
            series=series,
            title="median req/s by release",
            y_label="median requests per second",
        )
        return chart_node(chart, RPS.unit)

    def _figures(
        self, view: RunView, releases: list[Release], cells: tuple[str, ...], subjects: tuple[str, ...]
    ) -> nodes.Node:
        server = self.options.get("server")
        headers = ["Release", *([f"{server} installed"] if server else []), "Server banners"]
        headers += [f"{s}, {view.run.cell_label(c)}" for s in subjects for c in cells]
        rows = []
        for release in releases:
            installed = [_server_version(release, server)] if server else []
            banners = []
            for subject in subjects:
                record = view.run.subject(release.copy(subject) or "")
                banners.append(record.server_software or "—" if record else "did not run")
            row: list[object] = [release.release, *installed, " / ".join(dict.fromkeys(banners))]
            for subject in subjects:
                for cell in cells:
                    summary = view.summaries.get((release.copy(subject) or "", cell))
                    shown = with_interval(summary.median(), summary.interval(), RPS.fmt) if summary else "—"
                    row.append(data(shown, release=release.release, subject=subject, cell=cell, metric="rps"))
            rows.append(row)
        return table(headers, rows, classes=["bench-releases"])

    def _ratio_chart(
        self, view: RunView, releases: list[Release], cells: tuple[str, ...], top: str, base: str
    ) -> nodes.Node:
        series = []
        container = nodes.container()
        rows = []
        for cell in cells:
            ratios = [_ratio(view=view, release=r, top=top, base=base, cell=cell) for r in releases]
            series.append(
                Series(
                    view.run.cell_label(cell),
                    tuple(i.value if i else None for i in ratios),
                    tuple(i.low if i else None for i in ratios),
                    tuple(i.high if i else None for i in ratios),
                )
            )
            rows.append(ratios)
        chart = Chart(
            kind="bar",
            title=f"{top} ÷ {base}, req/s, by release (whiskers: 95 % interval, round by round)",
            x_label="release, oldest first",
            y_label=f"{top} ÷ {base}",
            categories=tuple(r.release for r in releases),
            series=tuple(series),
            decimals=2,
            values_in="the table below it",
        )
        container += chart_node(chart, "×")
        headers = ["Release", *(f"{top} ÷ {base}, {view.run.cell_label(c)} [95 %]" for c in cells)]  # below
        body = []
        for index, release in enumerate(releases):
            line: list[object] = [release.release]
            for number, cell in enumerate(cells):
                found = rows[number][index]
                shown = fmt_interval(found, rounds=False) if found else "—"
                line.append(data(shown, release=release.release, cell=cell, ratio=f"{top}/{base}"))
            body.append(line)
        container += table(headers, body, classes=["bench-releases"])
        return container

    def _verdicts(self, releases: list[Release], claims: list[str]) -> nodes.Node:
        """A row per release, a column per claim of the page that applies to the sweep's subjects."""
        if not claims:
            return nodes.paragraph(text="This page has no claims to decide per release.")
        rows = []
        for release in releases:
            line: list[object] = [release.release]
            for claim, verdict in zip(claims, release.verdicts, strict=True):
                line.append(data(verdict_node(verdict.state), release=release.release, claim=claim))
            rows.append(line)
        caption = nodes.paragraph(
            text="Each claim of the page decided on each release's copies alone (one run: its rounds' noise, "
            "not the spread between runs), by the same rule as above."
        )
        verdicts = table(["Release", *claims], rows, classes=["bench-releases", "bench-release-verdicts"])
        return collapsed("Every claim's verdict on every release", caption, verdicts)

    def _changes(
        self, view: RunView, releases: list[Release], cells: tuple[str, ...], subjects: tuple[str, ...]
    ) -> list[nodes.Node]:
        """Each release against the newest, in time (req/s, round by round) and, where counted, in work
        (instructions per request, batch by batch)."""
        changes = changes_against_newest(view, releases, list(subjects), list(cells))
        if not changes:
            return [nodes.paragraph(text="Too few rounds to compare the releases.")]
        work = work_changes_against_newest(view, releases, list(subjects))
        newest = releases[-1].release
        time_words = "In time (each release's req/s against the newest's, round by round)"
        details = [change_chart(view, releases, changes, level_label(changes[0].ratio.level))]
        details.append(_said(view=view, releases=releases, changes=changes, currency=time_words, words=FASTER))
        if work:
            work_words = "In work (each release's instructions per request against the newest's, batch by batch)"
            details.append(
                _said(view=view, releases=releases, changes=work, currency=work_words, words=MORE_INSTRUCTIONS)
            )
        return [collapsed(f"Which releases differ from {newest}, and by how much: a chart and the list", *details)]


def _said(view: RunView, releases: list[Release], changes: list[Change], currency: str, words: Direction) -> nodes.Node:
    """Which releases changed against the newest (the run's reference) in one currency, and at what simultaneous
    level."""
    reference = reference_release(view, releases)
    newest = reference.release if reference is not None else "the reference"
    changed = [c for c in changes if c.changed]
    if not changed:
        text = f"{currency}: no release changed against {newest} in any of the {len(changes)} comparisons"
    else:
        by_release: dict[str, list[Change]] = {}
        for change in changed:
            by_release.setdefault(change.release, []).append(change)
        named = "; ".join(
            f"{release}: "
            + ", ".join(f"{c.subject} {view.run.cell_label(c.cell)} {with_range(c.ratio, words)}" for c in found)
            for release, found in by_release.items()
        )
        text = f"{currency}, releases that changed against {newest}: {named}. "
        text += f"{len(by_release)} of {len(releases) - 1} releases"
    level = level_label(changes[0].ratio.level)
    return nodes.paragraph(
        text=f"{text} (intervals simultaneous over all {len(changes)} comparisons, each at {level}, so that the whole "
        "list keeps a 5 % chance of a false alarm)."
    )


def _median(view: RunView, subject: str | None, cell: str) -> float | None:
    summary = view.summaries.get((subject or "", cell))
    return summary.median() if summary else None


def _ratio(view: RunView, release: Release, top: str, base: str, cell: str) -> Interval | None:
    a, b = release.copy(top), release.copy(base)
    return view.ratio((a, cell), (b, cell)) if a and b else None


def _patched(view: RunView, release: Release) -> bool:
    records = [view.run.subject(name) for name in release.copies.values()]
    return any(origin.build for record in records if record for origin in record.origins)


def _server_version(release: Release, server: str) -> nodes.Node:
    """The version of the server distribution the release's environment installed (or that it installed none)."""
    version = release.variant.version_of(server)
    return data(version or f"none (no {server})", release=release.release, server=server)


def _memory(view: RunView, releases: list[Release], subjects: tuple[str, ...] | list[str]) -> list[nodes.Node]:
    """Each release's memory at its peak (USS), subject by subject, where the run recorded it."""
    held = {figure.subject: figure for figure in memory_figures(view.run)}
    lines = []
    for subject in subjects:
        shown = [
            f"{release.release} {held[copy].peak.uss_bytes / 2**20:,.1f} MiB"  # type: ignore[union-attr]
            for release in releases
            if (copy := release.copy(subject)) in held and held[copy].peak is not None
        ]
        if shown:
            lines.append(f"{subject}, memory at its peak (USS, the whole process tree): {'; '.join(shown)}.")
    return [nodes.paragraph(text=line) for line in lines]


def told(found: Story, recipe: str, run: str) -> nodes.Node:
    """The story's sentences, one item each, the upstream reports' addresses (their `report` and `fix` fields, and
    nothing else: an address in a title stays text) as links."""
    listing = nodes.bullet_list(classes=["bench-sweep-story"])
    sentences = found.sentences
    addresses = sorted({str(url) for r in found.reports for url in (r.report, r.fix) if url}, key=len, reverse=True)
    linked = re.compile("(" + "|".join(map(re.escape, addresses)) + ")") if addresses else None
    for sentence in sentences:
        paragraph = nodes.paragraph()
        for piece in linked.split(sentence) if linked else [sentence]:
            if piece in addresses:
                paragraph += nodes.reference("", piece.removeprefix("https://github.com/"), refuri=piece)
            elif piece:
                paragraph += nodes.Text(piece)
        listing += nodes.list_item("", paragraph)
    return data(listing, story="sweep", recipe=recipe, run=run)
