"""Which to pick, on a recipe page's card: a sentence per kind of client, and the three figures that decide it
(throughput, p99 latency at half load, memory at its peak) side by side from the page's run."""

from __future__ import annotations

from docutils import nodes

from benchsite.errors import BenchError
from benchsite.results.picking import Pick, pick, pick_said
from benchsite.results.view import RunView
from benchsite.sphinxext.nodes import bench_details, data
from benchsite.sphinxext.tables import table


def parse_kinds(spec: str, where: str) -> list[tuple[str, str]]:
    """ "keep-alive clients = wrk-c10; one request per connection = c10" as (kind, cell) pairs."""
    kinds = []
    for part in filter(None, (piece.strip() for piece in spec.split(";"))):
        kind, _, cell = part.partition("=")
        if not kind.strip() or not cell.strip():
            raise BenchError(f"{where}: :pick: takes 'KIND = CELL; ...', got {part!r}")
        kinds.append((kind.strip(), cell.strip()))
    return kinds


def parse_costs(lines: list[str], where: str) -> dict[str, str]:
    """The directive's content, one 'subject: what picking it costs' a line."""
    costs = {}
    for line in filter(None, (raw.strip() for raw in lines)):
        subject, _, said = line.partition(":")
        if not said.strip():
            raise BenchError(f"{where}: a line of the pick's content is 'SUBJECT: what it costs', got {line!r}")
        costs[subject.strip()] = said.strip()
    return costs


def pick_node(view: RunView, kinds: list[tuple[str, str]], costs: dict[str, str], recipe: str) -> nodes.Node:
    """The pick sentences, then the figures behind them in one small table, opened on demand."""
    run = view.run
    missing = [cell for _, cell in kinds if cell not in run.cell_names]
    box = nodes.container(classes=["bench-pick"])
    intro = nodes.paragraph()
    intro += nodes.strong(text="Which to pick? ")
    if missing:
        intro += nodes.Text(f"The page's run ({run.run_id}) did not measure {', '.join(missing)}.")
        box += intro
        return box
    picks = [pick(view, kind, cell) for kind, cell in kinds]
    intro += nodes.Text(
        "The fastest by median req/s, with memory at its peak (USS: what only their processes hold) and p99 at "
        "half load (99 % of requests answered within it, at half the req/s they sustain)."
    )
    box += intro
    listing = nodes.bullet_list()
    for found in picks:
        line = data(nodes.paragraph(text=pick_said(found, costs)), pick=found.cell, recipe=recipe)
        listing += nodes.list_item("", line)
    box += listing
    details = bench_details(summary="The figures behind the pick")
    details += _figures(picks, view, recipe)
    left_out = [f"{found.kind}: {', '.join(found.left_out)}" for found in picks if found.left_out]
    if left_out:
        details += nodes.paragraph(text="Left out of the pick: " + "; ".join(left_out) + ".")
    box += details
    return box


def _figures(picks: list[Pick], view: RunView, recipe: str) -> nodes.Node:
    rows = []
    for found in picks:
        for candidate in found.candidates:
            tag = {"recipe": recipe, "subject": candidate.subject, "cell": found.cell, "run": view.run.run_id}
            rps = f"{candidate.rps:,.0f}" + (" (load tool's limit: at least)" if candidate.tool_limited else "")
            memory = "—" if candidate.peak_mib is None else f"{candidate.peak_mib:,.1f} MiB"
            rows.append(
                [
                    f"{found.kind} ({view.run.cell_label(found.cell)})",
                    candidate.label,
                    data(rps, figure="rps", **tag),
                    data(candidate.p99_said, figure="p99-half", **tag),
                    data(memory, figure="peak-uss", **tag),
                ]
            )
    heads = ("For (cell)", "Server", "Median req/s", "p99 at half load", "Memory at peak (USS)")
    return table(heads, rows, classes=["bench-pick-figures"])
