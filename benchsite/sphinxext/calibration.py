"""``.. bench-calibration::``: the A/A runs' verdict on the harness's own intervals (see results/calibration.py)."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.errors import BenchError
from benchsite.model.run import RUN_FILE
from benchsite.results.calibration import calibrate, slicing
from benchsite.results.intervals import LEVEL, level_label
from benchsite.results.store import list_runs, load_view
from benchsite.sphinxext.base import BenchDirective
from benchsite.sphinxext.chart_directive import chart_node
from benchsite.sphinxext.chartspec import Chart, Series
from benchsite.sphinxext.nodes import data
from benchsite.sphinxext.tables import table


class BenchCalibration(BenchDirective):
    """Coverage of the A/A ratio intervals by rounds, their width, and compare's false-positive rate; with
    :slicings:, the same measurement sliced as other profiles, by width per minute of machine time."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "slicings": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        return [*self._calibration(), *self._slicings()]

    def _slicings(self) -> list[nodes.Node]:
        names = [n.strip() for n in self.options.get("slicings", "").split(",") if n.strip()]
        if not names:
            return []
        recipe_dir = self.data_dir() / self.recipe
        rows = []
        for name in names:
            runs = list_runs(recipe_dir, name)
            if not runs:
                raise BenchError(f"bench-calibration: no {name} run of {self.recipe} in {recipe_dir}")
            for path in runs:
                self.note(path / RUN_FILE)
            found = slicing(name, [load_view(path) for path in runs])
            rows.append(
                [
                    name,
                    f"ab -n {found.requests}",
                    str(found.rounds),
                    str(found.runs),
                    f"{found.minutes_per_run:.2f}",
                    f"±{100 * found.median_half_width:.1f} %",
                    f"±{100 * found.width_per_minute:.1f} %",
                ]
            )
        headers = (
            "Profile",
            "Slice",
            "Rounds",
            "Runs",
            "Minutes measuring per run",
            "Median half-width",
            "Scaled to one minute",
        )
        intro = nodes.paragraph(
            text="The same measurement sliced differently (each profile of the calibration recipe, with the same "
            "requests per cell in all): the width of its intervals, and that width scaled to one minute of "
            "measuring (a width shrinks as one over the square root of the time), so that slicings compare."
        )
        return [intro, table(headers, rows)]

    def _calibration(self) -> list[nodes.Node]:
        groups = self.machine_runs()
        views = sorted((v for group in groups for v in group.views), key=lambda v: v.run.run_id)
        if len(views) < 2:
            raise BenchError(f"bench-calibration: {len(views)} run of {self.recipe}: it needs at least two")
        found = calibrate(views)
        full = found.full
        machines = ", ".join(f"{g.label} ({len(g.views)} runs)" for g in groups)
        summary = nodes.paragraph()
        summary += nodes.Text(f"{len(full.intervals)} A/A ratio intervals from {found.runs} runs on {machines}: ")
        summary += data(
            f"{full.covering} of {len(full.intervals)} cover 1 ({100 * full.coverage:.1f} %)",
            recipe=self.recipe,
            calibration="coverage",
        )
        summary += nodes.Text(
            f" at their nominal {level_label(LEVEL)}, from {full.rounds} rounds each; their median half-width "
            f"is ±{100 * full.median_half_width:.1f} %."
        )
        rate = found.compare
        compared = nodes.paragraph()
        compared += nodes.Text("invoke compare of consecutive runs, each run in one pair: ")
        compared += data(
            f"{rate.pairs_flagged} of {rate.pairs} pairs flagged a change",
            recipe=self.recipe,
            calibration="compare",
        )
        compared += nodes.Text(
            f" ({rate.cells_flagged} of {rate.cells} cells, each pair's intervals simultaneous over its cells and "
            "widened by the run-to-run drift these runs show); every change it could report is false here."
        )
        rows = [
            [
                str(at.rounds),
                str(len(at.intervals)),
                f"{at.covering} ({100 * at.coverage:.1f} %)",
                f"±{100 * at.median_half_width:.1f} %",
            ]
            for at in found.by_rounds
        ]
        headers = (
            "First rounds of each run",
            "Intervals",
            f"Cover 1 (nominal {level_label(LEVEL)})",
            "Median half-width",
        )
        none = ((None,) * len(found.by_rounds),) * 2  # no whiskers
        chart = Chart(
            kind="line",
            title=f"A/A ratio intervals by rounds ({found.runs} runs)",
            x_label="rounds the interval is read from",
            y_label="%",
            categories=tuple(str(at.rounds) for at in found.by_rounds),
            series=(
                Series(
                    "median half-width, %", tuple(100 * at.median_half_width for at in found.by_rounds), *none, colour=0
                ),
                Series("cover 1, %", tuple(100 * at.coverage for at in found.by_rounds), *none, colour=2),
            ),
        )
        return [summary, compared, table(headers, rows), chart_node(chart, "%")]
