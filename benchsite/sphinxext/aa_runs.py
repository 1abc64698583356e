"""``.. bench-aa:: experiments/versus/RECIPE RUN-ID RUN-ID ...``: A/A runs of `invoke versus` (B a copy of A
changed in nothing that runs), each run's calls in time and in work, and how many cells were called changed against
what the 95 % level allows (the path is relative to the data folder; the runs are named, never the newest)."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes

from benchsite.results.comparing import PairedCell
from benchsite.sphinxext.history import short_run_name
from benchsite.sphinxext.tables import table
from benchsite.sphinxext.versus import AbRunDirective

LEVEL = 0.05  # each currency's intervals: 95 %, simultaneous over a run's cells


class BenchAa(AbRunDirective):
    """One row per A/A run: the machine's state, rounds, and the cells called changed in each currency; then the
    tally against the level."""

    required_arguments = 2
    final_argument_whitespace = True

    def render(self) -> list[nodes.Node]:
        folder = Path(self.config.bench_data_dir) / self.arguments[0]
        rows, time_calls, work_calls, runs_called, time_cells, work_cells = [], 0, 0, 0, 0, 0
        for run_id in self.arguments[1].split():
            view, cells = self.ab_run(folder / run_id, f"name runs under {self.arguments[0]}")
            timed = [cell for cell in cells if cell.time_changed]
            worked = [cell for cell in cells if cell.work_changed]
            time_calls, work_calls = time_calls + len(timed), work_calls + len(worked)
            time_cells += len(cells)
            work_cells += sum(cell.work is not None for cell in cells)
            runs_called += bool(timed or worked)
            rounds = view.run.rounds.made if view.run.rounds else view.run.profile.rounds
            rows.append(
                [
                    short_run_name(run_id),
                    view.interference_said(),
                    str(rounds),
                    _calls(timed, cells),
                    _calls(worked, [cell for cell in cells if cell.work is not None]),
                ]
            )
        runs = len(rows)
        said = (
            f"{runs} A/A runs: {runs_called} of them called any change; time called {time_calls} of its "
            f"{time_cells} cells changed, and work {work_calls} of its {work_cells}. Each run's intervals are "
            f"simultaneous over its cells at 95 %, so a sound rule calls a change in at most {100 * LEVEL:g} % of "
            f"A/A runs in each currency, about {LEVEL * runs:.1f} of these {runs}."
        )
        headers = ("Run", "Others' work on the machine", "Rounds", "Time: cells changed", "Work: cells changed")
        return [table(headers, rows, classes=["bench-aa"]), nodes.paragraph(text=said)]


def _calls(called: list[PairedCell], compared: list[PairedCell]) -> str:
    """ "0 of 4", or "1 of 4 (c10-k)"."""
    named = f" ({', '.join(cell.cell for cell in called)})" if called else ""
    return f"{len(called)} of {len(compared)}{named}"
