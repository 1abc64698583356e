"""``.. bench-versus:: experiments/versus/RECIPE/RUN-ID``: an A/B run's answer, B ÷ A in time and in work, cell by
cell, recomputed from the run (the path is relative to the data folder)."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes

from benchsite.errors import BenchError
from benchsite.results.change_words import cells_said, detectable_said
from benchsite.results.comparing import PairedCell, paired_cells, paired_subjects, time_untold
from benchsite.results.deciding import answered_said
from benchsite.results.design import design_of
from benchsite.results.latency import copies_said
from benchsite.results.store import load_view
from benchsite.results.view import RunView
from benchsite.sphinxext.base import ReportingDirective
from benchsite.sphinxext.nodes import data
from benchsite.sphinxext.tables import table


class AbRunDirective(ReportingDirective):
    """A directive that reads A/B runs by their folders."""

    def ab_run(self, path: Path, what_to_do: str) -> tuple[RunView, list[PairedCell]]:
        """The A/B run in `path` and its compared cells; a missing folder or a run with no A and B copy is a
        BenchError saying what to do."""
        if not path.is_dir():
            raise BenchError(f"{path}: no such A/B run: {what_to_do}")
        view = load_view(path)
        self.env.note_dependency(str(view.run.run_file))
        cells = paired_cells(view)
        if not cells:
            raise BenchError(f"{path}: not an A/B run (no subject measured as an A and a B copy)")
        return view, cells


class BenchVersus(AbRunDirective):
    """The sides, then one row per subject and cell: each side's median req/s and instructions per request, and
    B ÷ A in both currencies with their simultaneous intervals."""

    required_arguments = 1

    def render(self) -> list[nodes.Node]:
        path = Path(self.config.bench_data_dir) / self.arguments[0]
        view, cells = self.ab_run(path, "give experiments/versus/RECIPE/RUN-ID")
        rows = []
        for cell, (time_said, work_said) in zip(cells, cells_said(cells), strict=True):
            a, b = cell.a, cell.b
            tag = f"{cell.subject}-{cell.cell}"
            rows.append(
                [
                    cell.subject,
                    cell.cell,
                    _median(view, a, cell.cell),
                    _median(view, b, cell.cell),
                    data(time_said, versus=tag, currency="time", run=view.run.run_id),
                    _counted(view, a, cell.cell),
                    _counted(view, b, cell.cell),
                    data(work_said, versus=tag, currency="work", run=view.run.run_id),
                ]
            )
        headers = (
            "Subject",
            "Cell",
            "A req/s (median)",
            "B req/s (median)",
            "Time: B ÷ A",
            "A instructions/request",
            "B instructions/request",
            "Work: B ÷ A",
        )
        rounds = view.run.rounds.made if view.run.rounds else view.run.profile.rounds
        answered = answered_said(view, cells)
        starts, counting = view.run.starts, view.run.profile.counting
        counted = f", and counted in {counting.starts} starts" if counting and counting.starts > 1 else ""
        started = (  # how often the servers started, and what the intervals are over
            f"; the servers started {len(starts)} times, each time with a hash seed of its own shared by A and "
            f"B{counted}, and the intervals are over the starts, so they cover what a start adds"
            if starts
            else "; each server started once, so a change is called only beyond ±1 %, what two starts of the same "
            "code can differ by"
        )
        return [
            *([nodes.paragraph(text=answered, classes=["bench-answered"])] if answered else []),
            nodes.paragraph(text=_sides(view)),
            table(headers, rows, classes=["bench-versus"]),
            nodes.paragraph(
                text=f"Measured on {view.run.machine.name} ({view.run.started_at[:10]}), {rounds} rounds, each "
                "measuring A and B back to back in every cell (A first in odd rounds, B first in even ones)"
                f"{started}; instructions counted under callgrind after the timed rounds. Intervals: "
                "95 %, simultaneous over the cells of each currency" + design_of(view.run.profile).intervals_said(view)
            ),
            nodes.paragraph(text=detectable_said(cells)),
            *(nodes.paragraph(text=said) for cell in cells if (said := time_untold(view, cell))),
            *(nodes.paragraph(text=said + ".") for said in copies_said(view.run, paired_subjects(view))),
        ]


def _sides(view: RunView) -> str:
    assert view.run.variants is not None  # an A/B run: paired_cells found its sides
    said = [f"{variant.name.upper()}: {variant.spec}" for variant in view.run.variants.variants]
    return f"{view.run.title} ({view.run.recipe}), measured as two sides in one run: {said[0]}; {said[1]}."


def _median(view: RunView, subject: str, cell: str) -> str:
    figure = view.figure(subject, cell)
    median = figure.summary.median() if figure else None
    return "—" if median is None else f"{median:,.0f}"


def _counted(view: RunView, subject: str, cell: str) -> str:
    count = view.run.counting.of(subject, cell) if view.run.counting else None
    per_request = count.per_request if count else None
    return "—" if per_request is None else f"{per_request:,.0f}"
