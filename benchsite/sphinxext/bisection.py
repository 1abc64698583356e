"""``.. bench-bisection:: experiments/bisect/RECIPE/FOLDER`` (``:repository: URL`` to link its commits): what
`invoke bisect` found, the commit with its date, subject and the files it touched, the A/B between it and its
parent in both currencies, and every step that led there (the path is relative to the data folder)."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.errors import BenchError
from benchsite.model.bisection import STATE_FILE, Bisection
from benchsite.model.variant import SourceCommit
from benchsite.records import read_json
from benchsite.results.change_words import cells_said
from benchsite.results.comparing import PairedCell
from benchsite.sphinxext.tables import table
from benchsite.sphinxext.versus import AbRunDirective

VERDICT_WORDS = {
    "bad": "changed as the last release did",
    "good": "as the good release",
    "undecided": "undecided",
    "does not build": "does not build (skipped)",
    "failed": "did not run (skipped)",
}


class BenchBisection(AbRunDirective):
    """The found commit in a paragraph, the A/B against its parent, then the steps as a table."""

    required_arguments = 1
    option_spec = {"repository": directives.uri}  # noqa: RUF012 (docutils reads it from the class)

    def render(self) -> list[nodes.Node]:
        folder = Path(self.config.bench_data_dir) / self.arguments[0]
        path = folder / STATE_FILE
        if not path.is_file():
            raise BenchError(f"{folder}: no bisection there: give experiments/bisect/RECIPE/FOLDER")
        self.env.note_dependency(str(path))
        state = Bisection.from_json(read_json(path), path)
        if state.first_bad is None or not state.last:
            raise BenchError(f"{path}: the bisection has not ended: run `invoke bisect` again to go on")
        machine, confirm = self.ab_run(folder / state.confirm, "re-run invoke bisect")
        _, last = self.ab_run(folder / state.last, "re-run invoke bisect")
        parent = state.parent or state.good
        found = nodes.paragraph(classes=["bench-bisection"])
        found += nodes.Text("The first commit that changed it: ")
        found += self._commit(state.first_bad)
        found += nodes.Text(f" ({state.first_bad.date[:10]}), “{state.first_bad.subject}”, found in ")
        found += nodes.Text(
            f"{len(state.steps)} measured steps among the {state.candidates} commits between the two releases "
            f"({state.wall_s / 60:.0f} min on {machine.run.machine.name})."
        )
        if state.remaining:
            found += nodes.Text(
                f" Skipped commits leave it one of {len(state.remaining)}: "
                + ", ".join(c[:10] for c in state.remaining)
                + "."
            )
        evidence = nodes.bullet_list()
        against = nodes.paragraph(text="Against its parent ")
        against += self._commit(parent)
        against += nodes.Text(f": {_both(last)}.")
        between = nodes.paragraph(text=f"Between the two releases (the run that started it): {_both(confirm)}.")
        touched = nodes.paragraph(text=f"It touched {_files(state.touched)}.")
        for said in (against, between, touched):
            item = nodes.list_item()
            item += said
            evidence += item
        rows = [
            [str(number), self._described(step.commit), VERDICT_WORDS[step.verdict], step.said]
            for number, step in enumerate(state.steps, start=1)
        ]
        headers = ("Step", "Commit", "Called", "B ÷ A of req/s against the good release")
        kept = nodes.paragraph(text=f"Each step is an A/B run kept under data/{self.arguments[0]}/.")
        return [found, evidence, table(headers, rows, classes=["bench-bisection-steps"]), kept]

    def _described(self, commit: SourceCommit) -> nodes.Node:
        """A commit's linked id over its subject line, for a table's cell."""
        cell = nodes.paragraph()
        cell += self._commit(commit)
        cell += nodes.Text(f" {commit.subject}")
        return cell

    def _commit(self, commit: SourceCommit) -> nodes.Node:
        """A commit's short id, linked to the repository where the page gives one."""
        short = nodes.literal(text=commit.id[:10])
        base = self.options.get("repository")
        if not base:
            return short
        link = nodes.reference("", "", refuri=f"{base.rstrip('/')}/commit/{commit.id}")
        link += short
        return link


def _both(cells: list[PairedCell]) -> str:
    """An A/B run's cells in both currencies, as every A/B table words them."""
    said = []
    for cell, (time_said, work_said) in zip(cells, cells_said(cells), strict=True):
        said.append(f"{cell.subject} {cell.cell}: {time_said}")
        if work_said != "—":
            said.append(f"{cell.subject} {cell.cell} in instructions: {work_said}")
    return "; ".join(said)


def _files(touched: tuple[str, ...]) -> str:
    """The files a commit touched, at most eight named."""
    if not touched:
        return "no file"
    named = ", ".join(touched[:8])
    return named + (f" and {len(touched) - 8} more" if len(touched) > 8 else "")
