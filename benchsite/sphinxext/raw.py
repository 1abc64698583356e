"""The raw outputs and the exact commands: what each tool printed, verbatim, and every argv the run used."""

from __future__ import annotations

import os
import statistics
from pathlib import Path
from typing import Any, ClassVar, cast

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.domains.std import StandardDomain

from benchsite.errors import BenchError
from benchsite.model.portable import shown_command
from benchsite.model.run import RunDocument
from benchsite.sphinxext.base import BenchDirective, raw_label
from benchsite.sphinxext.nodes import RAW_LISTING
from benchsite.sphinxext.tables import literal
from benchsite.tools import AnyCellRun
from benchsite.tools.base import Repetition


def median_repetition(cell: AnyCellRun) -> Repetition[Any]:
    """The repetition whose req/s is the median (the first one if none succeeded)."""
    good = [rep for rep in cell.repetitions if rep.ok and rep.result]
    if not good:
        return cell.repetitions[0]
    target = statistics.median_low([rep.result.requests_per_s for rep in good if rep.result])
    return next(rep for rep in good if rep.result and rep.result.requests_per_s == target)


class BenchRaw(BenchDirective):
    """The verbatim output of each cell's load tool (its median repetition unless :rep: says which)."""

    option_spec: ClassVar[dict] = {
        **BenchDirective.option_spec,
        "subject": directives.unchanged,
        "cell": directives.unchanged,
        "rep": directives.positive_int,
    }

    def render(self) -> list[nodes.Node]:
        run = self.load_view().run
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

    def _listing(self, run: RunDocument, subject_name: str, subject_label: str, cell: AnyCellRun) -> list[nodes.Node]:
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
        text = f"$ {shown_command(rep.argv)}\n" + (run.raw_text(rep) or f"({cell.tool} printed nothing)\n")
        if rep.error:
            text += f"\n[harness] {rep.error}\n"
        heading = f"{subject_label}, {cell.label}"
        label = raw_label(run.recipe, subject_name, cell.name)
        node_id = nodes.make_id(label)
        cast(StandardDomain, self.env.get_domain("std")).note_hyperlink_target(
            label, self.env.docname, node_id, heading
        )
        title = nodes.rubric(text=f"{heading} ({which}): ", ids=[node_id])
        title += self._download(run, rep, rep.raw_output)
        listing = literal(text)
        listing["classes"].append(RAW_LISTING)  # a printed page points to it instead (nodes.for_other_builders)
        return [title, listing, self._every_repetition(run, cell)]

    def _download(self, run: RunDocument, rep: Repetition[Any], text: str) -> nodes.Node:
        """A link to the stored raw file itself; Sphinx copies it into the site's _downloads."""
        path = run.raw_file(rep)
        self.note(path)
        page_dir = Path(self.env.doc2path(self.env.docname)).parent
        return addnodes.download_reference(
            "",
            "",
            nodes.literal(text=text),
            reftarget=os.path.relpath(path, page_dir),  # Sphinx reads a leading "/" as the docs folder
            refdoc=self.env.docname,
            refexplicit=True,
        )

    def _every_repetition(self, run: RunDocument, cell: AnyCellRun) -> nodes.Node:
        """One link per repetition's raw output, so the ones beside the median can be read as well."""
        para = nodes.paragraph(text="Every repetition's raw output: ", classes=["bench-repetitions"])
        repetitions: tuple[Repetition[Any], ...] = tuple(cell.repetitions)
        for number, rep in enumerate(repetitions):
            if number:
                para += nodes.Text(" · ")
            para += self._download(run, rep, f"{rep.index}{'' if rep.ok else ' (failed)'}")
        return para


class BenchCommands(BenchDirective):
    """The exact command lines: each server, then the load tool's for each cell."""

    def render(self) -> list[nodes.Node]:
        run = self.load_view().run
        lines = ["# python is the project's .venv/bin/python; $WORKROOT the run's temporary folder"]
        if run.topology is not None:
            server, load = run.topology.server.machine.name, run.topology.load.machine.name
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
