"""Which to pick, on a recipe page's card: a sentence per kind of client, and the three figures that decide it
(throughput, p99 latency at half load, memory at its peak) side by side from the page's run."""

from __future__ import annotations

from docutils import nodes

from benchsite.errors import BenchError
from benchsite.results.picking import Pick, pick, pick_said
from benchsite.results.view import RunView
from benchsite.sphinxext.nodes import bench_details, data
from benchsite.sphinxext.tables import table


def parse_cells(spec: str, where: str) -> list[str]:
    """ "wrk-c10, c10" as the cells to pick in, each saying its own kind of client (a name of words is refused:
    the page says what the cell measured, never what its author called it)."""
    cells = [piece.strip() for piece in spec.replace(";", ",").split(",") if piece.strip()]
    if not cells or any("=" in cell or " " in cell for cell in cells):
        raise BenchError(
            f"{where}: :pick: takes the cells to pick in, 'CELL, CELL, ...' (got {spec!r}): the page words each "
            "cell's kind of client from what it measured"
        )
    return cells


def parse_costs(lines: list[str], where: str) -> dict[str, str]:
    """The directive's content, one 'subject: what picking it costs' a line."""
    costs = {}
    for line in filter(None, (raw.strip() for raw in lines)):
        subject, _, said = line.partition(":")
        if not said.strip():
            raise BenchError(f"{where}: a line of the pick's content is 'SUBJECT: what it costs', got {line!r}")
        costs[subject.strip()] = said.strip()
    return costs


def pick_node(view: RunView, cells: list[str], costs: dict[str, str], recipe: str) -> nodes.Node:
    """The pick sentences, then the figures behind them in one small table, opened on demand."""
    run = view.run
    missing = [cell for cell in cells if cell not in run.cell_names]
    box = nodes.container(classes=["bench-pick"])
    intro = nodes.paragraph()
    intro += nodes.strong(text="Which to pick? ")
    if missing:
        intro += nodes.Text(f"The page's run ({run.run_id}) did not measure {', '.join(missing)}.")
        box += intro
        return box
    picks = [pick(view, cell) for cell in cells]
    plan = view.run.latency.plan if view.run.latency is not None else None
    latency = (  # the open-loop load that measured the p99 beside a pick, in a reader's words
        f"; where measured, p99 latency (99 % of requests answered within it) at a steady half of the req/s it "
        f"sustains at {run.cell_label(plan.capacity_cell)}, "
        f"{'kept-alive connections' if plan.keepalive else 'a new connection per request'}"
        if plan is not None and any(_has_p99(found) for found in picks)
        else ""
    )
    intro += nodes.Text(
        "The fastest by median req/s, with memory at its peak (USS: what only its own processes hold)"
        + latency
        + "."
        + (WITNESS_SAID if any("(witness)" in c.p99_said for found in picks for c in found.candidates) else "")
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


WITNESS_SAID = " “Witness”: a second, slower sender's p99, on the server's own CPU, where the load tool fell behind."


def _has_p99(found: Pick) -> bool:
    return any(candidate.offered_rps is not None for candidate in found.candidates)


def _figures(picks: list[Pick], view: RunView, recipe: str) -> nodes.Node:
    rows = []
    for found in picks:
        for candidate in found.candidates:
            tag = {"recipe": recipe, "subject": candidate.subject, "cell": found.cell, "run": view.run.run_id}
            rps = f"{candidate.rps:,.0f}" + (" (load tool's limit: at least)" if candidate.tool_limited else "")
            cpu = "—" if candidate.cpu_us is None else f"{candidate.cpu_us:,.0f} µs"
            memory = "—" if candidate.peak_mib is None else f"{candidate.peak_mib:,.1f} MiB"
            rows.append(
                [
                    f"{found.kind} ({view.run.cell_label(found.cell)})",
                    candidate.label,
                    data(rps, figure="rps", **tag),
                    data(cpu, figure="server-cpu", **tag),
                    data(candidate.p99_said, figure="p99-half", **tag),
                    data(memory, figure="peak-uss", **tag),
                ]
            )
    heads = ("For (cell)", "Server", "Median req/s", "Server CPU a request", "p99 at half load", "Memory at peak (USS)")
    return table(heads, rows, classes=["bench-pick-figures"])
