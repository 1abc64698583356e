"""Directives that show the method's own experiments, recomputed from the runs their records list."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes

from benchsite.errors import BenchError
from benchsite.model.method import METHOD_DIR, MethodRecord, RunSet
from benchsite.model.run import RunDocument
from benchsite.model.upgrade import read_method
from benchsite.results.claims import State
from benchsite.results.interference import hog_experiment
from benchsite.results.method import median_spread, slices, stability
from benchsite.results.power import PILOT, POWER_CELL, POWER_SUBJECT, PowerLevel, power_level, power_said
from benchsite.results.published import PUBLISHED_FILE, Published, load_published
from benchsite.results.store import load_run
from benchsite.results.view import RunView
from benchsite.sphinxext.base import ReportingDirective
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.claims import verdict_node
from benchsite.sphinxext.history import short_run_name
from benchsite.sphinxext.nodes import data
from benchsite.sphinxext.tables import table


class MethodDirective(ReportingDirective):
    """Reads data/method/<argument>.toml and the runs and published claims it names."""

    required_arguments = 1

    def data_dir(self) -> Path:
        return Path(self.config.bench_data_dir)

    def record(self, name: str | None = None) -> MethodRecord:
        """The record the directive names (or `name`, another one)."""
        path = self.data_dir() / METHOD_DIR / f"{name or self.arguments[0]}.toml"
        self.env.note_dependency(str(path))
        if not path.is_file():
            raise BenchError(f"{path}: no such record of the method's experiments")
        return read_method(path)

    def runs(self, run_set: RunSet) -> list[RunDocument]:
        runs = []
        for run_dir in run_set.run_dirs(self.data_dir()):
            run = load_run(run_dir)
            self.env.note_dependency(str(run.run_file))
            runs.append(run)
        return runs

    def published(self, recipe: str) -> Published:
        path = self.data_dir() / recipe / PUBLISHED_FILE
        self.env.note_dependency(str(path))
        return load_published(path)


class BenchStability(MethodDirective):
    """Each claim's verdict in each run of a set, whether the runs agree, and the share each run decided."""

    def render(self) -> list[nodes.Node]:
        record = self.record()
        output: list[nodes.Node] = [nodes.paragraph(text=record.question)]
        flips = 0
        for run_set in record.sets:
            found = stability(self.runs(run_set), self.published(run_set.recipe))
            claims = [verdict.claim.id for verdict in found.verdicts[0]]
            rows: list[list[str | nodes.Node]] = []
            for run, run_verdicts in zip(found.runs, found.verdicts, strict=True):  # a row per run: it reads down
                cells: list[str | nodes.Node] = [f"{short_run_name(run.run_id)}, {run.machine.name}"]
                for verdict in run_verdicts:
                    entry = nodes.paragraph()
                    entry += verdict_node(verdict.state)
                    entry += nodes.Text(f" {verdict.today}")
                    cells.append(entry)
                rows.append(cells)
            agreement: list[str | nodes.Node] = ["Runs agree"]
            for index in range(len(claims)):
                agree = found.consistent(index)
                flips += not agree
                agreement.append("yes" if agree else "NO: decided both ways")
            rows.append(agreement)
            shares = ", ".join(
                "— (none could run)" if (share := found.decided_share(i)) is None else f"{100 * share:.0f} %"
                for i in range(len(found.runs))
            )
            output += [
                nodes.rubric(text=run_set.label),
                table(("Run", *claims), rows, classes=["bench-stability"]),
                nodes.paragraph(
                    text=f"Share of the claims that could run decided, run by run: {shares}. "
                    f"Rounds made: {', '.join(str(r.rounds.made) if r.rounds else '?' for r in found.runs)}."
                ),
            ]
        summary = (
            "No claim was decided one way in one run and the other way in another."
            if not flips
            else (f"{flips} claim(s) were decided one way in one run and the other way in another.")
        )
        output.append(nodes.paragraph(text=summary))
        return output


class BenchPairing(MethodDirective):
    """How much the per-round ratios of each ratio claim scatter under each set's way of measuring."""

    def render(self) -> list[nodes.Node]:
        record = self.record()
        recipes = {run_set.recipe for run_set in record.sets}
        if len(recipes) != 1:
            raise BenchError(f"{self.arguments[0]}: a pairing record compares runs of one recipe, not {recipes}")
        published = self.published(recipes.pop())
        runs = {run_set.label: self.runs(run_set) for run_set in record.sets}
        rows = []
        for claim in published.claims:
            spreads = [median_spread(set_runs, claim) for set_runs in runs.values()]
            if all(spread is None for spread in spreads):
                continue  # decided on something other than a ratio (keep-alive): no scatter to compare
            rows.append([claim.id, *("—" if s is None else f"{100 * s:.1f} %" for s in spreads)])
        headers = ("Claim", *(f"{label} ({len(set_runs)} runs)" for label, set_runs in runs.items()))
        return [
            nodes.paragraph(text=record.question),
            table(headers, rows),
            nodes.paragraph(
                text="Each figure: the standard deviation of the logarithms of the per-round ratios, "
                "median over the runs (10 % means a single round's ratio is typically within about "
                "10 % of the run's estimate). Smaller scatter gives narrower intervals for the same "
                "number of rounds."
            ),
        ]


class BenchSlices(MethodDirective):
    """A/B runs of one subject and cell measured in slices of several lengths: how much their round ratios
    scatter, raw and per second of measuring."""

    def render(self) -> list[nodes.Node]:
        record = self.record()
        found = [
            slices(run_set.label, [RunView(run) for run in self.runs(run_set)], POWER_SUBJECT, POWER_CELL)
            for run_set in record.sets
        ]
        rows = [
            [
                each.label,
                str(each.runs),
                f"{each.requests:,}",
                f"{each.round_s:.2f} s",
                f"{100 * each.spread:.1f} %",
                data(f"{100 * each.per_second:.1f} %", slices=each.label),
            ]
            for each in found
        ]
        headers = ("Slices", "A/B runs", "Requests a slice", "A round", "Round ratios' scatter", "Per second")
        return [
            nodes.paragraph(text=record.question),
            table(headers, rows),
            nodes.paragraph(
                text="Scatter: the standard deviation of the logarithms of the round ratios B ÷ A, median over the "
                "runs. Per second: the scatter times the square root of a round's seconds, the scatter a round "
                "of one second would have if each request's noise were its own. Where it is alike for two slice "
                "lengths, slicing finer cancels nothing that longer slices do not average away."
            ),
        ]


class BenchHogged(MethodDirective):
    """Quiet runs and runs under a CPU hog: each claim's verdict with the interference rule and without it,
    against the quiet runs pooled, and what compare says of each quiet/hogged pair."""

    def render(self) -> list[nodes.Node]:
        record = self.record()
        sets = {run_set.label: run_set for run_set in record.sets}
        if set(sets) != {"quiet", "hogged"} or len({s.recipe for s in record.sets}) != 1:
            raise BenchError(f"{self.arguments[0]}: a hog record has a 'quiet' and a 'hogged' set of one recipe")
        found = hog_experiment(
            self.runs(sets["quiet"]), self.runs(sets["hogged"]), self.published(sets["quiet"].recipe)
        )
        claims = [verdict.claim.id for verdict in found.reference]
        rows: list[list[str | nodes.Node]] = [
            ["Quiet runs pooled", "—", *(_verdict(v.state, v.today) for v in found.reference)]
        ]
        for label, runs in (("quiet", found.quiet), ("hogged", found.hogged)):
            for run in runs:
                cells: list[str | nodes.Node] = [
                    f"{label}: {short_run_name(run.view.run.run_id)}",
                    run.view.interference_said(),
                ]
                for with_rule, without in zip(run.with_rule, run.without_rule, strict=True):
                    cell = _verdict(with_rule.state, with_rule.today)
                    if without.state != with_rule.state or without.today != with_rule.today:
                        cell += nodes.Text("; without the rule ")
                        if without.state != with_rule.state:
                            cell += verdict_node(without.state)
                        cell += nodes.Text(f" {without.today}")
                    cells.append(cell)
                rows.append(cells)
        wrong = [found.opposite(found.hogged, rule) for rule in (True, False)]
        widths = [found.median_half_width(found.hogged, rule) for rule in (True, False)]
        pairs = [found.pairs_flagged(rule) for rule in (True, False)]
        verdicts = len(found.hogged) * len(claims)
        return [
            nodes.paragraph(text=record.question),
            nodes.paragraph(
                text="Each cell: the run's verdict and estimate with the rule (its disturbed repetitions left out, "
                "their rounds measured again), then, where it differs, the same run read as if every repetition "
                "counted."
            ),
            table(("Run", "Interference", *claims), rows, classes=["bench-stability"]),
            nodes.paragraph(
                "",
                "",
                data(
                    f"Of {verdicts} verdicts of the hogged runs, {wrong[0]} decided the other way from the quiet runs "
                    f"pooled with the rule, {wrong[1]} without it; their intervals' median half-width "
                    f"{_width(widths[0])} with the rule, {_width(widths[1])} without. invoke compare flagged a "
                    f"change in {pairs[0][0]} of {pairs[0][1]} quiet/hogged pairs with the rule, "
                    f"{pairs[1][0]} without it (each interval widened by the quiet runs' run-to-run drift).",
                    method="hogged",
                ),
            ),
        ]


def _verdict(state: State, said: str) -> nodes.paragraph:
    entry = nodes.paragraph()
    entry += verdict_node(state)
    entry += nodes.Text(f" {said}")
    return entry


def _width(width: float | None) -> str:
    return "—" if width is None else f"±{100 * width:.1f} %"


class BenchPower(MethodDirective):
    """The power benchmark: per injected slowdown, the share of A/B runs each currency called, as a table and a
    power curve."""

    def levels(self, record: MethodRecord) -> list[PowerLevel]:
        levels = [
            power_level(run_set.label, [RunView(run) for run in self.runs(run_set)])
            for run_set in record.sets
            if not run_set.label.startswith(PILOT)
        ]
        if not levels:
            raise BenchError(f"{self.arguments[0]}: a power record needs a set of runs per injected slowdown")
        return levels

    def render(self) -> list[nodes.Node]:
        record = self.record()
        levels = self.levels(record)
        rows = [
            [
                level.label,
                str(level.runs),
                _change(level.work_change),
                _change(level.time_change),
                _width(level.time_half_width),
                "—" if level.median_rounds_s is None else f"{level.median_rounds_s:.0f} s",
                data(
                    f"{level.work_called} of {level.runs}",
                    power=level.label.split(" (")[0],
                    currency="work",
                    record=self.arguments[0],
                ),
                data(
                    f"{level.time_called} of {level.runs}",
                    power=level.label.split(" (")[0],
                    currency="time",
                    record=self.arguments[0],
                ),
            ]
            for level in levels
        ]
        headers = (
            "Injected",
            "A/B runs",
            "Work measured (median)",
            "Time measured (median)",
            "Time interval (median)",
            "Rounds took (median)",
            "Work called a change",
            "Time called a change",
        )
        chart = Chart(
            kind="bar",
            title="Share of A/B runs that called a change",
            x_label="injected slowdown of the framework at -c 1 (work: of its instructions; time: of its time)",
            y_label="runs that called a change (%)",
            categories=tuple(level.label.split(" (")[0] for level in levels),
            series=tuple(
                Series(
                    label,
                    tuple(100 * called(level) / level.runs for level in levels),
                    tuple(None for _ in levels),
                    tuple(None for _ in levels),
                    colour=colour,
                )
                for label, called, colour in (
                    ("work (instructions per request)", lambda level: level.work_called, 0),
                    ("time (req/s, paired rounds)", lambda level: level.time_called, 1),
                )
            ),
            values_in="the table above",
        )
        return [
            nodes.paragraph(text=record.question),
            table(headers, rows, classes=["bench-power"]),
            chart_node(chart, "%"),
        ]


class BenchPowerSaid(BenchPower):
    """One sentence of what a power record's runs called, level by level, for the top of a page: where it was
    measured (the directive's content, e.g. "On a quiet machine") and the counts, recomputed from the runs."""

    has_content = True

    def render(self) -> list[nodes.Node]:
        record = self.record()
        runs = [run for run_set in record.sets for run in self.runs(run_set)]
        machines = ", ".join(sorted({run.machine.name for run in runs}))
        days = sorted({run.started_at[:10] for run in runs})
        where = (
            " ".join(self.content).strip() or "Measured"
        ) + f" ({machines}, {' to '.join(dict.fromkeys([days[0], days[-1]]))})"
        paragraph = nodes.paragraph(text=power_said(where, self.levels(record)))
        paragraph["classes"].append("bench-power-said")
        return [paragraph]


def _change(change: float | None) -> str:
    return "—" if change is None else f"{100 * change:+.1f} %"
