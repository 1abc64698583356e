"""``.. bench-sequential:: RECORD [RECORD ...]``: the power benchmark's A/B runs answered by the fixed design and by
the sequential rule replayed round by round, with the false alarms of A/A runs counted and simulated.

Options: ``:all-a-a:`` the records whose every set is an A/A one (slices); ``:smallest:`` the smallest changes
that matter the sequential rule is shown at (default "0.01, 0.05").
"""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.model.run import RunDocument
from benchsite.results.intervals import LEVEL
from benchsite.results.power import PILOT
from benchsite.results.sequential_power import (
    DesignRow,
    fixed_answers,
    sequential_answers,
    share_interval,
    simulated_false_alarms,
)
from benchsite.sphinxext.method import MethodDirective
from benchsite.sphinxext.tables import table

A_A = "A/A"
SIMULATED_RUNS, SIMULATED_ROUNDS, SIMULATION_SEED = 20_000, 64, 20261127


class BenchSequential(MethodDirective):
    """Per injected change, each design's calls in time and its median time to answer; A/A false alarms pooled."""

    required_arguments = 1
    optional_arguments = 10
    option_spec: ClassVar[dict] = {
        "all-a-a": directives.unchanged,
        "smallest": directives.unchanged,
        "said": directives.flag,
    }

    def grouped(self) -> dict[str, list[RunDocument]]:
        """Every record's runs by the change injected ("A/A", "1 % time"...), the pilots left out."""
        all_a_a = set((self.options.get("all-a-a") or "").split())
        groups: dict[str, list[RunDocument]] = {}
        for name in self.arguments:
            for run_set in self.record(name).sets:
                if run_set.label.startswith(PILOT):
                    continue
                label = A_A if name in all_a_a else run_set.label.split(" (")[0]
                groups.setdefault(label, []).extend(self.runs(run_set))
        return groups

    def render(self) -> list[nodes.Node]:
        smallest = [float(s) for s in (self.options.get("smallest") or "0.01, 0.05").split(",")]
        groups = self.grouped()
        rows: list[list[str | nodes.Node]] = []
        a_a: list[DesignRow] = []
        every: list[list[DesignRow]] = []
        for label, runs in sorted(groups.items(), key=lambda item: (item[0] != A_A, _size(item[0]))):
            designs = [DesignRow(label, "fixed", fixed_answers(runs))]
            designs += [DesignRow(label, f"±{100 * s:g} %", sequential_answers(runs, s)) for s in smallest]
            every.append(designs)
            if label == A_A:
                a_a = designs
            row: list[str | nodes.Node] = [label, str(len(runs)), f"{designs[0].work_called} of {len(runs)}"]
            for design in designs:
                row += [f"{design.called} of {design.runs}", f"{design.median_s:.0f} s"]
            rows.append(row)
        if "said" in self.options:
            paragraph = nodes.paragraph(text=in_words(every))
            paragraph["classes"].append("bench-power-said")
            return [paragraph]
        headers = ["Injected", "Runs", "Work called (either design)", "Fixed: time called", "after"]
        for each in smallest:
            headers += [f"Sequential ±{100 * each:g} %: time called", "after"]
        return [
            nodes.paragraph(text=said(a_a, len(self.arguments))),
            table(headers, rows, classes=["bench-sequential"]),
            nodes.paragraph(text=simulated_said()),
        ]


def _size(label: str) -> float:
    """Order the injected changes by size: "0.5 % work" before "1 % time"."""
    head = label.split(" ")[0]
    try:
        return float(head)
    except ValueError:
        return 0.0


def said(a_a: list[DesignRow], records: int) -> str:
    """The A/A runs' false alarms under each design, with a 95 % interval of each share."""
    if not a_a:
        return "No A/A runs in these records."
    parts = []
    for design in a_a:
        low, high = share_interval(design.called, design.runs)
        name = "the fixed design" if design.design == "fixed" else f"the sequential rule at {design.design}"
        parts.append(f"{name} {design.called} ({100 * low:.0f}-{100 * high:.0f} %)")
    return (
        f"In {a_a[0].runs} A/A runs of {records} records (the same app on both sides), time called a change in: "
        + "; ".join(parts)
        + f" (each in brackets: the 95 % interval of the share of all such runs, Clopper-Pearson). The level is "
        f"{100 * (1 - LEVEL):g} %."
    )


def simulated_said() -> str:
    """The simulation's false-alarm rates, computed at build time from a fixed seed."""
    sequence, fixed = simulated_false_alarms(SIMULATED_RUNS, SIMULATED_ROUNDS, SIMULATION_SEED)
    return (
        f"Simulated: {SIMULATED_RUNS:,} A/A runs of normal per-round noise, each looked at after every one of "
        f"{SIMULATED_ROUNDS} rounds. The confidence sequence called a change in {100 * sequence:.1f} % of them; "
        f"a fixed-sample t interval looked at as often called one in {100 * fixed:.1f} %, where "
        f"{100 * (1 - LEVEL):g} % was meant."
    )


def in_words(every: list[list[DesignRow]]) -> str:
    """Each injected change under the sequential rule at the last smallest change shown, beside the fixed
    design: "an unchanged app was called changed in 0 of 46 runs (fixed: 1 of 46); a 1 % time slowdown was seen
    in 5 of 20, after a median 140 s (fixed: 16 of 20, after 150 s)"."""
    said = []
    for designs in every:
        fixed, sequential = designs[0], designs[-1]
        if "work" in fixed.label:  # work calls what it called in the fixed design: the time levels say the rest
            continue
        if fixed.label == A_A:
            said.append(
                f"an unchanged app (A/A) was called changed in {sequential.called} of {sequential.runs} runs "
                f"(fixed: {fixed.called} of {fixed.runs})"
            )
        else:
            said.append(
                f"a {fixed.label} slowdown was seen by time in {sequential.called} of {sequential.runs} and by work "
                f"in {sequential.work_called}, the rounds answering after a median {sequential.median_s:.0f} s "
                f"(fixed: {fixed.called} by time, after {fixed.median_s:.0f} s)"
            )
    rule = every[0][-1].design if every else ""
    return (
        f"Sequential, with {rule} the smallest change that matters (the power runs' rounds replayed; work counted "
        "after them in either design): " + "; ".join(said) + "."
    )
