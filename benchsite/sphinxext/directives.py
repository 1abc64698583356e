"""Directives that turn a recipe's stored run into tables, charts and raw listings."""

from __future__ import annotations

import re
import statistics
from pathlib import Path
from typing import ClassVar, cast

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.domains.std import StandardDomain
from sphinx.util.docutils import SphinxDirective

from benchsite.errors import BenchError
from benchsite.model.base import read_json
from benchsite.model.overhead import OVERHEAD_DIR, OVERHEAD_FILE, OverheadRecord
from benchsite.model.portable import shown_command
from benchsite.model.recipe import RECIPE_FILE, Settings, load_recipe
from benchsite.model.run import (
    RUN_FILE,
    AbCell,
    ClientCell,
    Environment,
    Origin,
    Repetition,
    RunDocument,
    WrkCell,
)
from benchsite.results.figures import figure
from benchsite.results.intervals import LEVEL, Interval, median_interval, ratio_interval
from benchsite.results.stats import summarize
from benchsite.results.store import list_runs, load_run, shown_run
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.exports import export_links
from benchsite.sphinxext.listings import note_listing
from benchsite.sphinxext.nodes import ReportingDirective, bench_chart
from benchsite.sphinxext.tables import (
    fmt_keepalive,
    fmt_ms,
    fmt_percent,
    fmt_rps,
    fmt_us,
    literal,
    table,
    with_interval,
)

CellRun = AbCell | WrkCell | ClientCell


PAGE_RECIPE = "bench-recipe"  # the page's recipe, set by `.. bench-recipe:: NAME`


class BenchRecipe(SphinxDirective):
    """``.. bench-recipe:: NAME``: the recipe of every bench directive below it on the page that names none."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        self.env.temp_data[PAGE_RECIPE] = self.arguments[0]
        return []


class BenchDirective(ReportingDirective):
    """Common ground: the recipe argument (or the page's), the run option, dependencies, warnings."""

    optional_arguments = 1
    option_spec: ClassVar[dict] = {"run": directives.unchanged}

    @property
    def recipe(self) -> str:
        if self.arguments:
            return self.arguments[0]
        if PAGE_RECIPE in self.env.temp_data:
            return str(self.env.temp_data[PAGE_RECIPE])
        raise BenchError(f"{self.name}: which recipe? Name it, or put `.. bench-recipe:: NAME` above on the page")

    def data_dir(self) -> Path:
        return Path(self.config.bench_data_dir)

    def note(self, path: Path) -> None:
        """Rebuild this page when the file changes."""
        self.env.note_dependency(str(path))

    def note_runs(self, recipe_dir: Path) -> None:
        """Rebuild this page when the recipe gets a new run (or loses one)."""
        note_listing(self.env, recipe_dir, f"*/{RUN_FILE}")

    def load_run(self) -> RunDocument:
        """The run named by :run:, else the latest run of the site's profile (bench_profile: full)."""
        recipe_dir = self.data_dir() / self.recipe
        self.note_runs(recipe_dir)
        wanted = self.options.get("run")
        if wanted:
            path = recipe_dir / wanted
            if not path.is_dir():
                known = ", ".join(p.name for p in list_runs(recipe_dir)) or "none"
                raise BenchError(f"{path}: no such run of {self.recipe!r}: I know about {known}")
        else:
            profile = self.config.bench_profile
            latest = shown_run(recipe_dir, profile)
            if latest is None:
                raise BenchError(
                    f"{recipe_dir}: no run of recipe {self.recipe!r}: "
                    f"run `.venv/bin/invoke recipe {self.recipe} --profile {profile}` and commit its run directory"
                )
            path = latest
        run = load_run(path)
        self.note(run.run_file)
        return run

    def declared_names(self, run: RunDocument) -> tuple[set[str], set[str]]:
        """Subject and cell names the recipe declares (a quick run may have fewer), else the run's."""
        recipes_dir = Path(self.config.bench_recipes_dir)
        if not (recipes_dir / self.recipe / RECIPE_FILE).is_file():
            return {s.name for s in run.subjects} | {s.name for s in run.skipped}, set(run.cell_names)
        self.note(recipes_dir / self.recipe / RECIPE_FILE)
        recipe = load_recipe(self.recipe, recipes_dir, Path(self.config.bench_conf_dir))
        return {s.name for s in recipe.subjects}, {c.name for c in recipe.loads}


def raw_label(recipe: str, subject: str, cell: str) -> str:
    """The cross-reference label of a cell's raw listing (made by bench-raw)."""
    return f"bench-raw-{recipe}-{subject}-{cell}"


def link_to_raw(text: str, label: str) -> nodes.paragraph:
    """A figure that links to the raw output it came from."""
    reference = addnodes.pending_xref(
        "",
        nodes.inline(text=text),
        refdomain="std",
        reftype="ref",
        reftarget=label,
        refexplicit=True,
        refwarn=True,
    )
    paragraph = nodes.paragraph()
    paragraph += reference
    return paragraph


class BenchResults(BenchDirective):
    """A table of every subject and cell: median req/s, spread, CPU cost, latency, flags."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "cells": directives.unchanged}
    headers = (
        "Subject",
        "Load",
        "Median req/s",
        "95 % interval",
        "CV",
        "Server CPU µs/req",
        "Load CPU µs/req",
        "Mean ms/req",
        "p50 / p99 (ms)",
        "Keep-alive",
        "Status",
    )

    def render(self) -> list[nodes.Node]:
        run = self.load_run()
        wanted = selected(self.options.get("cells"), run.cell_names, "cells", run.run_file)
        rows: list[list] = []
        warnings: list[str] = []
        for subject in run.subjects:
            label = subject.label + (" (load-tool ceiling)" if subject.role == "ceiling" else "")
            for cell in subject.cells:
                if cell.name not in wanted:
                    continue
                found = figure(run, subject.name, cell.name)
                assert found is not None
                s = found.summary
                warnings += [f"{label}, {cell.label}: {w}" for w in s.noise_warnings(f"conf/{run.recipe}.toml")]
                rows.append(
                    [
                        label,
                        cell.label,
                        link_to_raw(fmt_rps(s.rps_median), raw_label(run.recipe, subject.name, cell.name)),
                        fmt_median_interval(s.rps_interval),
                        fmt_percent(s.rps_cv_percent),
                        fmt_us(s.server_cpu_us_per_request_median),
                        fmt_us(s.tool_cpu_us_per_request_median),
                        fmt_ms(s.time_per_request_ms_median),
                        f"{fmt_ms(s.latency_ms_p50_median)} / {fmt_ms(s.latency_ms_p99_median)}",
                        fmt_keepalive(s.keepalive_honoured),
                        found.status,
                    ]
                )
        for skipped in run.skipped:
            rows.append(
                [
                    skipped.label,
                    "—",
                    "—",
                    "—",
                    "—",
                    "—",
                    "—",
                    "—",
                    "—",
                    "—",
                    f"DID NOT RUN: {skipped.reason} ({skipped.detail})".replace(" ()", ""),
                ]
            )
        caption = self._caption(run, self.config.bench_profile)
        output: list[nodes.Node] = [
            nodes.paragraph(text=caption),
            table(self.headers, rows, classes=["bench-results"]),
            export_links(self.env, run),
        ]
        if warnings:
            output.append(nodes.rubric(text=f"Noise warnings ({len(warnings)} cells)"))
            listing = nodes.bullet_list(classes=["bench-noise"])
            for warning in warnings:
                listing += nodes.list_item("", nodes.paragraph(text=warning))
            output.append(listing)
        return output

    @staticmethod
    def _caption(run: RunDocument, published_profile: str) -> str:
        profile = run.profile
        counts = sorted({len(c.repetitions) for s in run.subjects for c in s.cells})
        reps = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
        warmup = (
            f" after a discarded ab warm-up of {profile.warmup_requests} requests"
            if profile.warmup_requests and run.warmups
            else ""
        )
        return (
            f"Run {run.run_id} ({profile.name} profile{_unpublished(run, published_profile)}): "
            f"{reps} repetition{'s' if reps != '1' else ''} per cell, each {_loads(run)}{warmup}; "
            "medians over the repetitions with a distribution-free 95 % interval (where too few repetitions allow "
            "no 95 % interval, the min–max range and its coverage); CV = standard deviation / mean of req/s; load "
            "CPU is the load tool's (ab, wrk) or, for a client under test, the client's own. "
            "Each median links to the raw output of the repetition at the median (with an even count, the one "
            "just below it)."
        )


def _loads(run: RunDocument) -> str:
    """What one repetition of each cell ran, from the stored cells: "ab -n 5000 (feed: -n 200), wrk -d 3 s"."""
    parts = []
    for kind, cells in (
        ("ab", [c for s in run.subjects for c in s.cells if isinstance(c, AbCell)]),
        ("client", [c for s in run.subjects for c in s.cells if isinstance(c, ClientCell)]),
        ("wrk", [c for s in run.subjects for c in s.cells if isinstance(c, WrkCell)]),
    ):
        if not cells:
            continue
        amounts = {c.name: (f"-d {c.duration_s} s" if isinstance(c, WrkCell) else f"-n {c.requests}") for c in cells}
        common = max(set(amounts.values()), key=list(amounts.values()).count)
        others = ", ".join(f"{name}: {amount}" for name, amount in amounts.items() if amount != common)
        shown = f"{common.removeprefix('-n ')} requests by the client" if kind == "client" else f"{kind} {common}"
        parts.append(shown + (f" ({others})" if others else ""))
    return ", ".join(parts)


def _unpublished(run: RunDocument, published_profile: str) -> str:
    if run.profile.name == published_profile:
        return ""
    return f"; no {published_profile} run of this recipe yet, so the page shows this one, not a published run"


def fmt_median_interval(interval: Interval | None) -> str:
    """1,010 – 1,060, with the coverage where it is below 95 % (min–max of few repetitions)."""
    if interval is None or interval.low is None or interval.high is None:
        return "—"
    coverage = "" if interval.level >= LEVEL else f" ({100 * interval.level:.0f} %)"
    return f"{fmt_rps(interval.low)} – {fmt_rps(interval.high)}{coverage}"


def selected(option: str | None, available: tuple[str, ...], what: str, source: Path) -> tuple[str, ...]:
    """The names an option lists (comma-separated), checked against what the run has; all if absent."""
    if not option:
        return available
    names = tuple(name.strip() for name in option.split(",") if name.strip())
    unknown = [name for name in names if name not in available]
    if unknown:
        raise BenchError(f"{', '.join(unknown)}: no such {what} in {source}: I know about {', '.join(available)}")
    return names


MAX_GROUPED_BARS = 5  # more subjects than this get sorted horizontal bars


class BenchChart(BenchDirective):
    """A chart of one metric over the cells: grouped bars, or lines (e.g. req/s against concurrency)."""

    option_spec: ClassVar[dict] = {
        **BenchDirective.option_spec,
        "metric": lambda value: directives.choice(value, ("rps", "server-cpu", "client-cpu")),
        "kind": lambda value: directives.choice(value, ("bar", "hbar", "line")),
        "cells": directives.unchanged,
        "subjects": directives.unchanged,
        "x-label": directives.unchanged,
    }
    metrics: ClassVar[dict[str, tuple[str, str]]] = {
        "rps": ("median requests per second", "req/s"),
        "server-cpu": ("server CPU time per request (µs, median)", "µs"),
        "client-cpu": ("client CPU time per request (µs, median)", "µs"),
    }

    def render(self) -> list[nodes.Node]:
        metric = self.options.get("metric", "rps")
        run = self.load_run()
        cells = selected(self.options.get("cells"), run.cell_names, "cells", run.run_file)
        charted = tuple(s.name for s in run.subjects if s.cells)
        names = selected(self.options.get("subjects"), charted, "subjects", run.run_file)
        # Many subjects: one sorted panel per load setting, so that no label meets another.
        kind = self.options.get("kind", "hbar" if len(names) > MAX_GROUPED_BARS else "bar")
        y_label, unit = self.metrics[metric]
        series = []
        for name in names:
            subject = run.subject(name)
            assert subject is not None
            figures = [figure(run, name, cell) for cell in cells]
            summaries = [f.summary if f else None for f in figures]
            flagged = tuple(bool(f and not f.usable) for f in figures)
            if metric == "rps":
                medians = tuple(s.rps_median if s and not s.repetitions_failed else None for s in summaries)
                intervals = [s.rps_interval if s else None for s in summaries]
                lows = tuple(i.low if i else None for i in intervals)
                highs = tuple(i.high if i else None for i in intervals)
            else:
                cpu = (
                    (lambda s: s.server_cpu_us_per_request_median)
                    if metric == "server-cpu"
                    else (lambda s: s.tool_cpu_us_per_request_median)
                )
                medians = tuple(cpu(s) if s else None for s in summaries)
                lows = highs = tuple(None for _ in summaries)
            series.append(
                Series(
                    subject.label,
                    medians,
                    lows,
                    highs,
                    flagged,
                    colour=charted.index(name),
                    reference=kind == "hbar" and subject.role == "ceiling",
                )
            )
        labels = tuple(run.cell_label(cell) for cell in cells)
        chart = Chart(
            kind=kind,
            title=f"{run.title} — run {run.run_id}",
            x_label=self.options.get("x-label", "load setting"),
            y_label=y_label + ("\n(whiskers: 95 % interval)" if kind in ("bar", "hbar") and metric == "rps" else ""),
            categories=labels,
            series=tuple(series),
        )
        node = bench_chart()
        node["chart"] = chart
        node["alt"] = chart.alt_text(unit)
        return [node]


def median_repetition(cell: CellRun) -> Repetition:
    """The repetition whose req/s is the median (the first one if none succeeded)."""
    good = [rep for rep in cell.repetitions if rep.ok and rep.result]
    if not good:
        return cell.repetitions[0]
    target = statistics.median_low([rep.result.requests_per_s for rep in good if rep.result])
    return next(rep for rep in good if rep.result and rep.result.requests_per_s == target)


class BenchRaw(BenchDirective):
    """The verbatim ab output of each cell (its median repetition unless :rep: says which)."""

    option_spec: ClassVar[dict] = {
        **BenchDirective.option_spec,
        "subject": directives.unchanged,
        "cell": directives.unchanged,
        "rep": directives.positive_int,
    }

    def render(self) -> list[nodes.Node]:
        run = self.load_run()
        wanted_subject, wanted_cell = self.options.get("subject"), self.options.get("cell")
        output: list[nodes.Node] = []
        for subject in run.subjects:
            if wanted_subject and subject.name != wanted_subject:
                continue
            for cell in subject.cells:
                if wanted_cell and cell.name != wanted_cell:
                    continue
                output += self._listing(run, subject.name, subject.label, cell)
        if not output:
            raise BenchError(f"bench-raw: no subject {wanted_subject!r} with cell {wanted_cell!r} in {run.run_file}")
        return output

    def _listing(self, run: RunDocument, subject_name: str, subject_label: str, cell: CellRun) -> list[nodes.Node]:
        index = self.options.get("rep")
        if index:
            rep = next((r for r in cell.repetitions if r.index == index), None)
            if rep is None:
                raise BenchError(f"bench-raw: {cell.name} has no repetition {index} in {run.run_file}")
            which = f"repetition {index} of {len(cell.repetitions)}"
        else:
            rep = median_repetition(cell)
            which = f"repetition {rep.index} of {len(cell.repetitions)}, the median by req/s"
        raw_path = run.raw_file(rep)  # confined to the run directory
        self.note(raw_path)
        text = f"$ {shown_command(rep.argv)}\n" + (run.raw_text(rep) or "(ab printed nothing)\n")
        if rep.error:
            text += f"\n[harness] {rep.error}\n"
        heading = f"{subject_label}, {cell.label}"
        label = raw_label(run.recipe, subject_name, cell.name)
        node_id = nodes.make_id(label)
        cast(StandardDomain, self.env.get_domain("std")).note_hyperlink_target(
            label, self.env.docname, node_id, heading
        )
        title = nodes.rubric(text=f"{heading} ({which}): {rep.raw_output}", ids=[node_id])
        return [title, literal(text)]


class BenchEnvironment(BenchDirective):
    """The machine, software and settings of the run."""

    def render(self) -> list[nodes.Node]:
        run = self.load_run()
        env, settings, profile = run.environment, run.settings, run.profile
        rows: list[list[str]] = [
            ["Run", f"{run.run_id} ({profile.name} profile)"],
            ["Started / finished (UTC)", f"{run.started_at} / {run.finished_at}"],
            [
                "Load per cell",
                f"ab -n {profile.requests}, {profile.repetitions} repetition{'s' * (profile.repetitions != 1)}, "
                f"warm-up {profile.warmup_requests} requests",
            ],
            ["Rounds", _rounds(run)],
            ["Order within a round", _interleave(settings)],
            ["Other work on the measured CPUs", _other_work(run)],
            ["CPU pinning", _pinning(settings)],
            ["ab socket timeout / run time limit", f"{settings.socket_timeout_s} s / {settings.cell_timeout_s:g} s"],
            ["Where the roles ran", where_roles_ran(run)],
        ]
        machine = "" if run.topology is None else " (server host)"
        for key, (label, _) in Environment.LABELS.items():
            rows.append([label + machine, env.shown(key)])
        if run.topology is not None:
            load_env = run.topology.load.environment
            for key, (label, _) in Environment.LABELS.items():
                if key not in ("git_commit", "load_average_at_start"):
                    rows.append([label + " (load host)", load_env.shown(key)])
        for subject in run.subjects:
            rows.append([f"Server banner: {subject.label}", subject.server_software or "(none sent)"])
        return [table(("", "Value"), rows, classes=["bench-environment"])]


def where_roles_ran(run: RunDocument) -> str:
    """One machine, or which host ran the servers and which the load tool, and at what addresses."""
    if run.topology is None:
        return "one machine: servers on 127.0.0.1, the load tool beside them"
    server, load = run.topology.server, run.topology.load
    return (
        f"two hosts: servers on {server.ssh or 'the harness machine'} listening on {server.address}; "
        f"the load tool on {load.ssh or 'the harness machine'}, across the network to {server.address}"
    )


def _rounds(run: RunDocument) -> str:
    rounds = run.rounds
    if rounds is None:
        return f"{run.profile.repetitions} of every cell (not recorded how the run stopped)"
    further = (
        f", then {rounds.further_repetitions} repetitions in further rounds of the cells of inconclusive claims"
        if rounds.further_repetitions
        else ""
    )
    return (
        f"{rounds.made} in all: {rounds.minimum} of every cell{further}; stopped: {rounds.stopped} "
        f"(measuring took {rounds.elapsed_s:g} s)"
    )


def _interleave(settings: Settings) -> str:
    if settings.interleave == "cell":
        return "cell by cell: the subjects of a cell back to back, their order turning every other round"
    return "subject by subject: every cell of a subject back to back"


def _other_work(run: RunDocument) -> str:
    reps = [rep for s in run.subjects for c in s.cells for rep in c.repetitions if rep.steal_s is not None]
    if not reps:
        return "not recorded in this run"
    steal = max(rep.steal_s or 0.0 for rep in reps)
    other = sorted(rep.other_busy_s or 0.0 for rep in reps)
    return (
        f"CPU steal at most {steal:.2f} s in a repetition; busy time not spent by the run's own processes "
        f"(the harness itself, the kernel's network work, anything else): median {other[len(other) // 2]:.2f} s, "
        f"at most {other[-1]:.2f} s per repetition"
    )


def _pinning(settings: Settings) -> str:
    if settings.server_cpu is None:
        return "none (fewer than two CPUs available)"
    return f"servers on CPU {settings.server_cpu}, ab on CPU {settings.tool_cpu}"


class BenchCommands(BenchDirective):
    """The exact command lines: each server, then ab for each cell."""

    def render(self) -> list[nodes.Node]:
        run = self.load_run()
        lines = ["# python is the project's .venv/bin/python; $WORKROOT the run's temporary folder"]
        if run.topology is not None:
            server, load = run.topology.server.ssh or "this machine", run.topology.load.ssh or "this machine"
            lines.append(f"# servers ran on {server}, the load tool on {load}")
        lines.append("")
        for subject in run.subjects:
            lines.append(f"# {subject.label} (started from recipes/{run.recipe}/)")
            lines.append(f"$ {shown_command(subject.argv)}")
            for cell in subject.cells:
                if cell.repetitions:
                    lines.append(f"$ {shown_command(cell.repetitions[0].argv)}")
            lines.append("")
        return [literal("\n".join(lines).rstrip() + "\n")]


class BenchOverhead(ReportingDirective):
    """The harness's own benchmark: its req/s against bare ab of the same argv (latest record)."""

    def render(self) -> list[nodes.Node]:
        directory = Path(self.config.bench_data_dir) / OVERHEAD_DIR
        note_listing(self.env, directory, f"*/{OVERHEAD_FILE}")
        files = sorted(directory.glob(f"*/{OVERHEAD_FILE}"))
        if not files:
            raise BenchError(
                f"{directory}: no harness benchmark recorded: run `.venv/bin/invoke overhead` and commit it"
            )
        path = files[-1]
        self.env.note_dependency(str(path))
        record = OverheadRecord.read(read_json(path), path)
        harness, bare = median_interval(record.harness_rps), median_interval(record.bare_rps)
        per_round = ratio_interval([h / b for h, b in zip(record.harness_rps, record.bare_rps, strict=False)])
        difference = f"{record.difference_percent:+.1f}% (of the medians)"
        if per_round is not None and per_round.low is not None and per_round.high is not None:
            difference += (
                f"; round by round {100 * (per_round.value - 1):+.1f}% [{100 * (per_round.low - 1):+.1f}% "
                f"… {100 * (per_round.high - 1):+.1f}%] (95 % interval)"
            )
        rows = [
            ["Command", shown_command(record.ab_argv)],
            ["Rounds (each way, interleaved)", str(record.rounds)],
            ["Median req/s through the harness", with_interval(record.harness_rps_median, harness, fmt_rps)],
            ["Median req/s of bare ab (taskset, same CPU)", with_interval(record.bare_rps_median, bare, fmt_rps)],
            ["Difference", difference],
            ["Recorded", f"{record.started_at} ({path.parent.name})"],
        ]
        return [table(("Harness vs bare ab", ""), rows)]


def software(origins: tuple[Origin, ...], recorded: bool) -> nodes.Node | str:
    """Where a subject's modules and programs came from, one paragraph each: version, build, file, checksum."""
    if not origins:
        return "Python and its standard library (see the machine)" if recorded else "not recorded by this run"
    cell = nodes.container()
    for origin in origins:
        checksum = f" sha256 {origin.sha256[:12]}…" if origin.sha256 else ""
        paragraph = nodes.paragraph(text=f"{origin.provides}: {origin.version}")
        if origin.build:
            paragraph += nodes.Text("; ")
            paragraph += _with_links(origin.build)
        paragraph += nodes.Text(" ")
        paragraph += nodes.literal(text=origin.path)
        paragraph += nodes.Text(checksum)
        cell += paragraph
    return cell


def _with_links(text: str) -> list[nodes.Node]:
    """A stored description as a reader takes it in: addresses as short links, digests cut to 12 digits."""
    parts: list[nodes.Node] = []
    for index, piece in enumerate(re.split(r"(https://[^\s,;)]+)", text)):
        if index % 2:
            host = piece.split("/")[2]
            parts.append(nodes.reference(text=f"{host}/…", refuri=piece))
        else:
            parts.append(nodes.Text(re.sub(r"\b([0-9a-f]{12})[0-9a-f]{28,}\b", r"\1…", piece)))
    return parts


class BenchSubjects(BenchDirective):
    """One row per subject: its Server banner, whether it keeps HTTP/1.0 connections alive, or why it did not run.

    Keep-alive comes from the ab -k cells where the run has them, else from the start-up probe
    (two HTTP/1.0 keep-alive requests on one connection).
    """

    def render(self) -> list[nodes.Node]:
        run = self.load_run()
        rows: list[list] = []
        recorded = any(subject.origins for subject in run.subjects)
        for subject in run.subjects:
            honoured = [
                s.keepalive_honoured
                for c in subject.cells
                if c.tool == "ab" and c.keepalive
                for s in [summarize(c)]
                if s.keepalive_honoured is not None
            ]
            if honoured:
                keepalive = fmt_keepalive(all(honoured)) + " (ab -k)"
            elif subject.keeps_http10_alive is not None:
                keepalive = fmt_keepalive(subject.keeps_http10_alive) + " (probe)"
            else:
                keepalive = "—"
            role = {"ceiling": " (load-tool ceiling)", "backend": " (backend)"}.get(subject.role, "")
            banner = "—" if subject.role == "client" else subject.server_software or "(none sent)"
            rows.append([subject.label + role, banner, keepalive, software(subject.origins, recorded), "ran"])
        for skipped in run.skipped:
            rows.append([skipped.label, "—", "—", "—", f"did not run: {skipped.reason} ({skipped.detail})"])
        return [table(("Subject", "Server banner", "HTTP/1.0 keep-alive (ab -k)", "Software", "Status"), rows)]


def short_run_name(run_id: str) -> str:
    """20261122T054028.494645Z-full as a column heading that can wrap: 2026-11-22 05:40:28 full."""
    day, time = run_id[:8], run_id[9:15]
    rest = run_id.split("Z", 1)[1].lstrip("-")
    return f"{day[:4]}-{day[4:6]}-{day[6:]} {time[:2]}:{time[2:4]}:{time[4:]} {rest}".strip()


class BenchHistory(BenchDirective):
    """Every stored run of a recipe (machine, date, profile, versions) and its cells' medians side by side."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "cells": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        recipe_dir = self.data_dir() / self.recipe
        self.note_runs(recipe_dir)
        runs = [load_run(path) for path in list_runs(recipe_dir, self.config.bench_profile)] or [
            load_run(path) for path in list_runs(recipe_dir)
        ]
        if not runs:
            raise BenchError(
                f"{recipe_dir}: no run of recipe {self.recipe!r}: run `.venv/bin/invoke recipe {self.recipe}`"
            )
        for run in runs:
            self.note(run.run_file)
        listing = table(
            ("Run", "Profile", "Started (UTC)", "Machine", "Versions"),
            [
                [
                    run.run_id,
                    run.profile.name,
                    run.started_at,
                    f"{run.environment.cpu_model}, {run.environment.cpu_count} CPUs, {run.environment.os}"
                    + ("" if run.topology is None else f"; {where_roles_ran(run)}"),
                    run.environment.shown("packages"),
                ]
                for run in runs
            ],
        )
        latest = runs[-1]
        cells = selected(self.options.get("cells"), latest.cell_names, "cells", latest.run_file)
        rows = []
        for subject in latest.measured:
            for cell in cells:
                values = []
                for run in runs:
                    record = run.subject(subject.name)
                    cell_record = record.cell(cell) if record else None
                    summary = summarize(cell_record) if cell_record else None
                    values.append(with_interval(summary.rps_median, summary.rps_interval, fmt_rps) if summary else "—")
                rows.append([subject.label, cell, *values])
        medians = table(("Subject", "Cell", *(short_run_name(run.run_id) for run in runs)), rows)
        note = nodes.paragraph(
            text=f"The page shows the latest run, {latest.run_id}; median req/s of every run, with its 95 % interval "
            "(min–max where five repetitions allow no more). Runs on other days or machines differ in more than "
            "noise: compare two with `invoke compare`."
        )
        return [listing, note, medians, self._chart(runs, latest, cells)]

    def _chart(self, runs: list[RunDocument], latest: RunDocument, cells: tuple[str, ...]) -> nodes.Node:
        """Median req/s over the runs: one line per subject and cell."""
        series = []
        for subject in latest.measured:
            for cell in cells:
                medians = []
                for run in runs:
                    record = run.subject(subject.name)
                    cell_record = record.cell(cell) if record else None
                    summary = summarize(cell_record) if cell_record else None
                    medians.append(summary.rps_median if summary and not summary.repetitions_failed else None)
                series.append(Series(f"{subject.label}, {cell}", tuple(medians), tuple(medians), tuple(medians)))
        chart = Chart(
            kind="line",
            title=f"{latest.title}: median req/s by run",
            x_label="run",
            y_label="median requests per second",
            categories=tuple(run.run_id for run in runs),
            series=tuple(series),
        )
        node = bench_chart()
        node["chart"] = chart
        node["alt"] = chart.alt_text("req/s")
        return node
