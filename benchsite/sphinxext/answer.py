"""The answer first: a card at the top of a recipe page with each original conclusion in one line, its
verdict over all machines, the state and estimate of each machine that made that verdict, and why, where the
work was counted."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.results.drift import drift_said
from benchsite.results.machines import ClaimAcross, MachineRuns, MachineVerdict
from benchsite.results.newest import newest_run, newest_said
from benchsite.results.ranking import ranking_said
from benchsite.results.view import RunView
from benchsite.sphinxext.base import PublishedDirective, selected
from benchsite.sphinxext.claims import badge_node, claim_anchor, verdict_reading
from benchsite.sphinxext.measured import beside_speed, page_run_with
from benchsite.sphinxext.nodes import bench_details, block, data
from benchsite.sphinxext.pick import parse_cells, parse_costs, pick_node


def every_machine(across: ClaimAcross) -> list[MachineVerdict]:
    """Every machine that ran the claim, those that made its state over all of them first (`deciding`)."""
    first = list(across.deciding)
    return first + [m for m in across.machines if m not in first]


def shown_estimate(machine: MachineVerdict) -> str | None:
    """What a card says a machine measured: its estimate, or the sentence of a claim not decided on a number
    (keep-alive); never the flag text of a figure that could not be used (None then: the evidence says why), nor a
    fastest claim's list of comparisons (the sentence in words under the line names them; the table, all)."""
    verdict = machine.verdict
    if (verdict.estimate is None and verdict.claim.kind == "ratio") or verdict.claim.kind == "fastest":
        return None
    return verdict.today if verdict.today not in ("", "—") else None


class BenchAnswer(PublishedDirective):
    """Each conclusion in one line: its verdict over every machine, the state and pooled estimate of each
    machine that made it (`deciding`), why (where the work was counted), and a link to its full row below;
    ``:rank: CELLS`` adds the servers ranked in each of those cells (which server to pick)."""

    option_spec: ClassVar[dict] = {
        **PublishedDirective.option_spec,
        "rank": directives.unchanged,
        "beside": directives.flag,
        "pick": directives.unchanged,
    }
    has_content = True  # with :pick:, one "SUBJECT: what picking it costs" a line

    def render(self) -> list[nodes.Node]:
        groups, published = self.machine_runs(), self.load_published()
        reference = groups[0]
        card = nodes.container(classes=["bench-answer"])
        glossed = "rank" in self.options  # the ranking above glosses -c N and -k where it first meets them
        opening = nodes.paragraph(
            "", "", nodes.strong(text="The answer"), nodes.Text(self._rests_on(groups, flags=not glossed))
        )
        listing = nodes.enumerated_list(enumtype="arabic", prefix="", suffix=".")
        for across in published.across(groups):
            line = nodes.paragraph()
            state = across.state
            tag = {"recipe": self.recipe, "claim": across.claim.id, "scope": "answer"}
            line += data(badge_node(across.badge, across.not_compared), badge=across.badge, state=state, **tag)
            line += nodes.Text(f" {across.claim.text}")
            machines = nodes.inline(classes=["bench-card-machines"])  # a phone leaves them to the table below
            for index, machine in enumerate(every_machine(across)):
                machines += nodes.Text(" — " if index == 0 else "; ")
                machines += nodes.Text(f"{machine.runs.label} ")
                machines += data(machine.verdict.badge.value, verdict="machine", machine=machine.runs.key, **tag)
                estimate = shown_estimate(machine)
                if estimate is not None:  # a figure follows the state; a sentence (keep-alive's) after a colon
                    machines += nodes.Text(" " if estimate[:1].isdigit() else ": ")
                    machines += data(estimate, estimate="answer", machine=machine.runs.key, **tag)
            line += machines
            line += nodes.Text(" (")
            line += nodes.reference("", "the evidence", refid=claim_anchor(across.claim.id))
            line += nodes.Text(")")
            item = nodes.list_item("", line)
            item += verdict_reading(across, tag)
            said = across.claim.why(reference.views)
            if said:
                item += nodes.paragraph(text=said, classes=["bench-why"])
            listing += item
        card += self._page_run(reference)
        newest = newest_said(groups, published)
        if newest:  # a user's own run, first: labelled, on the first screen
            found = newest_run(groups)
            assert found is not None
            lead, run_id = "The newest run", found[1].run.run_id
            line = nodes.paragraph("", "", nodes.strong(text=lead))
            line += nodes.inline(text=f" (run {run_id})", classes=["bench-wide-only"])  # a phone: in the history
            line += nodes.Text(newest.removeprefix(lead))
            line["classes"].append("bench-newest-run")
            card += block(line, newest=run_id)
        if "pick" in self.options:  # the reader's own question first, then the original's conclusions
            where = f"bench-answer of {self.recipe}"
            cells = parse_cells(self.options["pick"], where)
            card += pick_node(reference.main, cells, parse_costs(list(self.content), where), self.recipe)
        if "rank" in self.options:
            card += self._ranking(reference.main)
        card += opening
        card += listing
        if "beside" in self.options:
            card += self._beside(groups)
        return [card]

    def _page_run(self, reference: MachineRuns) -> nodes.Node:
        """The run every section of the page reads, named once."""
        run = reference.main.run
        line = nodes.paragraph(classes=["bench-page-run"])
        line += nodes.Text(f"Every section reads one run: {reference.label}, {run.started_at[:10]}")
        line += nodes.inline(text=f" (run {run.run_id})", classes=["bench-wide-only"])  # a phone: in the history
        if reference.main.busy:
            line += nodes.Text(f" ({reference.main.interference_said()})")
        line += nodes.Text("; the others are in the verdicts and the ")
        line += nodes.reference("", "history", refid="runs-of-this-recipe")
        line += nodes.Text(".")
        apart = drift_said(reference.main, [view for view in reference.views if view is not reference.main])
        if apart:
            line += nodes.Text(" ")
            # on a phone the history below gives each run's figures; the card keeps to the answer
            note = nodes.inline(text=apart, classes=["bench-wide-only"])
            line += data(note, drift="apart", recipe=self.recipe)
        return data(line, page_run=run.run_id, recipe=self.recipe)

    def _ranking(self, view: RunView) -> nodes.Node:
        """Which server: the page's run's servers ranked in each named cell, the load tool's limit marked."""
        _, declared = self.declared_names(view)  # checked against the recipe: a quick run may lack some cells
        named = selected(self.options["rank"], tuple(sorted(declared)), "cell to rank", view.run.run_file)
        cells = [cell for cell in named if cell in view.run.cell_names]
        if not cells:
            return nodes.paragraph(
                text=f"Which is fastest? The page's run ({view.run.run_id}) measured none of the cells "
                f"ranked here ({', '.join(named)})."
            )
        intro = nodes.paragraph()
        intro += nodes.strong(text="Which is fastest?")
        intro += nodes.Text(
            f" Median req/s in the page's run ({view.run.machine.name}), fastest first (-c N: N clients at once; -k: "
            "keep-alive, many requests on one connection); “>” where the paired rounds "
            "put it surely ahead of the next, “≈” where they cannot tell them apart. A figure marked “load tool's "
            "limit” is as fast as the load tool could drive it: compare those by a cheaper tool or their CPU per "
            "request below. One marked “at least N, busy” had every repetition disturbed by others' work on the "
            "machine: a lower bound, placed only ahead of the figures below it."
        )
        listing = nodes.bullet_list()
        for cell in cells:
            line = nodes.paragraph()
            line += nodes.strong(text=f"{view.run.cell_label(cell)}: ")
            line += data(ranking_said(view, cell), ranking=cell, recipe=self.recipe)
            listing += nodes.list_item("", line)
        box = nodes.container(classes=["bench-ranking"])
        if "pick" in self.options:  # the pick answers; the whole ranking backs it, opened on demand
            details = bench_details(summary="Every server ranked in each cell")
            details += intro
            details += listing
            box += details
            return box
        box += intro
        box += listing
        return box

    def _beside(self, groups: list[MachineRuns]) -> nodes.Node:
        """Besides speed, in one line: the range of p99 at half each server's capacity and of memory at its peak,
        from the page's run, every server side by side in the sections it links."""
        view = page_run_with(groups, "latency")
        line = nodes.paragraph(classes=["bench-beside"])
        line += nodes.strong(text="Beside speed. ")
        if view is None:
            line += nodes.Text("Latency at a given load and memory: not measured by the page's run.")
            return line
        self.note(view.run.run_file)
        line += data(beside_speed(view), beside="latency", recipe=self.recipe, run=view.run.run_id)
        line += nodes.Text(f" (run {view.run.run_id}, {view.run.machine.name}; every server side by side: ")
        line += nodes.reference("", "latency", refid="latency-at-a-given-load")
        line += nodes.Text(", ")
        line += nodes.reference("", "memory", refid="memory")
        line += nodes.Text(").")
        return line

    @staticmethod
    def _rests_on(groups: list[MachineRuns], flags: bool) -> str:
        """ ", from 10 runs on 2 machines (…):", glossing the words its lines use ("surely"; -c N and -k where
        `flags`)."""
        runs = sum(len(group.views) for group in groups)
        machines = len({group.machine.id for group in groups})
        glosses = ["-c N: N clients at once", "-k: keep-alive"] if flags else []
        glosses.append("“surely”: the whole 95 % interval on that side")
        return (
            f", from {runs} run{'s' * (runs != 1)} on {machines} machine{'s' * (machines != 1)} ({'; '.join(glosses)}):"
        )
