"""Where the stalled releases' time goes, as one table: each release's time per request, how much of it its server
spent on the CPU, and the function whose share of the wall-clock samples grew most against the release before."""

from __future__ import annotations

from docutils import nodes

from benchsite.results.waiting import Waiting
from benchsite.sphinxext.nodes import data
from benchsite.sphinxext.tables import table


def waiting_table(waits: list[Waiting], recipe: str) -> list[nodes.Node]:
    """A sentence naming the run and how it was sampled, then a row per stalled release ([] where none)."""
    if not waits:
        return []
    first = waits[0]
    lead = nodes.paragraph(
        text=f"Where each stalled release's time goes, sampled by wall clock with py-spy (run {first.run_id}), "
        f"against the last release at least twice as fast, {first.before}:"
    )
    rows = []
    for wait in waits:
        tag = {"recipe": recipe, "release": wait.release, "cell": wait.cell}
        rows.append(
            [
                wait.release,
                wait.cell,
                data(f"{wait.per_request_ms:,.1f} ms", waiting="per-request", **tag),
                data(f"{wait.cpu_per_request_ms:.2f} ms", waiting="cpu", **tag),
                data(f"{100 * wait.waiting:.1f} %", waiting="share", **tag),
                data(wait.function, waiting="function", **tag),
                f"{100 * wait.thread_share:.0f} % of one thread's time; {100 * wait.share:.0f} % of all its "
                f"threads' samples (was {100 * wait.share_before:.0f} %)",
            ]
        )
    heads = ("Release", "Cell", "Time per request", "On the CPU", "Waiting", "Grew most", "Its share")
    return [lead, table(heads, rows, classes=["bench-waiting"])]
