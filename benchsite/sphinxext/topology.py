"""``.. bench-topology:: RECIPE``: the latest run on one machine beside the latest across two hosts."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.model.run import RunDocument
from benchsite.results.change_words import change_said
from benchsite.results.compare import compare_runs
from benchsite.results.metrics import RPS
from benchsite.results.store import list_runs, load_view
from benchsite.results.view import RunView
from benchsite.sphinxext.base import BenchDirective, selected
from benchsite.sphinxext.environment import where_roles_ran
from benchsite.sphinxext.nodes import block, data
from benchsite.sphinxext.tables import table


class BenchTopology(BenchDirective):
    """Each cell's median req/s on one machine and across two hosts, and the change with its interval."""

    option_spec: ClassVar[dict] = {**BenchDirective.option_spec, "cells": directives.unchanged}

    def render(self) -> list[nodes.Node]:
        recipe_dir = self.data_dir() / self.recipe
        self.note_runs(recipe_dir)
        runs = [load_view(path).run for path in list_runs(recipe_dir, self.config.bench_profile)]
        two = _latest(runs, across_hosts=True)
        one = _nearest_one_machine_run(runs, two) if two is not None else _latest(runs, across_hosts=False)
        if one is None or two is None:
            missing = "across two hosts" if two is None else "on one machine"
            return [
                nodes.paragraph(
                    text=f"No {self.config.bench_profile} run of {self.recipe} {missing} yet: "
                    f"`.venv/bin/invoke recipe {self.recipe}"
                    + (" --hosts ...`" if two is None else "`")
                    + " makes one."
                )
            ]
        self.note(one.run_file)
        self.note(two.run_file)
        cells = selected(self.options.get("cells"), two.cell_names, "cells", two.run_file)
        rows = []
        for change in compare_runs(RunView(one), RunView(two)):
            if change.cell not in cells:
                continue
            subject = two.subject(change.subject)
            tag = {"recipe": self.recipe, "subject": change.subject, "cell": change.cell, "metric": "rps"}
            rows.append(
                [
                    subject.label if subject else change.subject,
                    two.cell_label(change.cell),
                    data(RPS.fmt(change.mean_a), run=one.run_id, **tag),
                    data(RPS.fmt(change.mean_b), run=two.run_id, **tag),
                    change_said(change.change, change.changed, margin=0.0, note=change.note),
                ]
            )
        caption = nodes.paragraph(
            text=f"A = {one.run_id} on one machine; B = {two.run_id}, {where_roles_ran(two)}. The geometric mean "
            "of each cell's req/s; the change B ÷ A, their ratio, with its interval (Welch t on the logarithms: "
            "the runs are not paired), simultaneous over every cell compared (Bonferroni): changed where "
            "it excludes 1."
        )
        heads = ("Subject", "Cell", "One machine (A)", "Two hosts (B)", "Change B ÷ A [simultaneous 95 %]")
        return [caption, block(table(heads, rows, classes=["bench-topology"]), table="topology", recipe=self.recipe)]


def _nearest_one_machine_run(runs: list[RunDocument], two: RunDocument) -> RunDocument | None:
    """The one-machine run of the same machine made closest in time to the two-host run: back to back,
    so that a difference between them is the network's, not the day's."""
    same = [run for run in runs if run.topology is None and run.machine.id == two.machine.id]
    return min(same, key=lambda run: abs(_started(run) - _started(two)), default=None)


def _started(run: RunDocument) -> float:
    return datetime.fromisoformat(run.started_at).timestamp()


def _latest(runs: list[RunDocument], across_hosts: bool) -> RunDocument | None:
    """The newest run whose roles were (or were not) on two hosts."""
    chosen = [run for run in runs if (run.topology is not None) == across_hosts]
    return chosen[-1] if chosen else None
