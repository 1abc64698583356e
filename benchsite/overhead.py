"""A benchmark of the harness itself: its req/s against a bare `ab` run of the same argv.

Both run against one server, interleaved (alternating which goes first), so the
machine's drift hits both alike. The raw outputs and the figures are stored
under data/harness-overhead/<run-id>/.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from benchsite.ab import parse_ab_output
from benchsite.environment import collect_environment, utc_now
from benchsite.errors import BenchError
from benchsite.processes import LOOPBACK, free_port, http_get, running_server, wait_until_ready
from benchsite.recipe import Recipe
from benchsite.runner import cell_argv, effective_settings, measure, verify_reply
from benchsite.store import staged_run_directory, write_json

OVERHEAD_DIR = "harness-overhead"


@dataclass(frozen=True)
class OverheadResult:
    """Medians of both ways of running the same ab command, and where the data went."""

    harness_rps: list[float]
    bare_rps: list[float]
    run_dir: Path

    @property
    def difference_percent(self) -> float:
        harness, bare = statistics.median(self.harness_rps), statistics.median(self.bare_rps)
        return 100.0 * (harness - bare) / bare


def _bare_ab(argv: list[str], cpu: int | None, raw_path: Path) -> float:
    """ab exactly as a user would type it (pinned with taskset), outside the harness."""
    command = (["taskset", "-c", str(cpu)] if cpu is not None else []) + argv
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    raw_path.write_text(completed.stdout)
    if completed.returncode != 0:
        raise BenchError(f"bare ab failed with exit code {completed.returncode}: {completed.stderr.strip()[-200:]}")
    return parse_ab_output(completed.stdout).requests_per_s


def compare_with_bare_ab(
    recipe: Recipe, subject_name: str, cell_name: str, rounds: int, requests: int, data_dir: Path, repo: Path
) -> OverheadResult:
    """Interleave `rounds` harness runs and bare ab runs of one cell against one server."""
    subject = next((s for s in recipe.subjects if s.name == subject_name), None)
    cell = next((c for c in recipe.cells if c.name == cell_name), None)
    if subject is None or cell is None:
        raise BenchError(
            f"no subject {subject_name!r} or cell {cell_name!r} in {recipe.name}: subjects are "
            f"{', '.join(s.name for s in recipe.subjects)}; cells are {', '.join(c.name for c in recipe.cells)}"
        )
    settings = effective_settings(recipe.settings)
    run_id = utc_now().replace(":", "").replace("-", "").replace("+0000", "Z")
    started_at = utc_now()
    with staged_run_directory(data_dir / OVERHEAD_DIR, run_id) as run_dir:
        port = free_port()
        argv = subject.argv({"python": sys.executable, "port": str(port), "host": LOOPBACK,
                             "recipe_dir": str(recipe.directory.resolve())})
        harness_rps: list[float] = []
        bare_rps: list[float] = []
        with running_server(subject.name, argv, port, settings.server_cpu, run_dir / "server.log",
                            cwd=recipe.directory) as server:
            wait_until_ready(server, subject.path, settings.start_timeout_s)
            verify_reply(subject, http_get(port, subject.path))
            ab_argv = cell_argv(server, subject, cell, requests, settings)
            (run_dir / "bare").mkdir()
            _bare_ab(ab_argv, settings.tool_cpu, run_dir / "bare" / "warm-up.txt")
            for index in range(1, rounds + 1):
                order = ("harness", "bare") if index % 2 else ("bare", "harness")
                for way in order:
                    if way == "harness":
                        rep = measure(server, subject, cell, requests, settings, run_dir, index)
                        if rep.result is None:
                            raise BenchError(f"harness run {index} failed: {rep.error}")
                        harness_rps.append(rep.result.requests_per_s)
                    else:
                        bare_rps.append(_bare_ab(ab_argv, settings.tool_cpu, run_dir / "bare" / f"rep-{index}.txt"))
        result = OverheadResult(harness_rps, bare_rps, data_dir / OVERHEAD_DIR / run_id)
        write_json(run_dir / "overhead.json", {
            "format_version": 1,
            "recipe": recipe.name, "subject": subject.name, "cell": cell.name,
            "ab_argv": ab_argv, "rounds": rounds, "started_at": started_at, "finished_at": utc_now(),
            "settings": {"server_cpu": settings.server_cpu, "tool_cpu": settings.tool_cpu},
            "environment": collect_environment(repo, list(recipe.packages), {"ab": [settings.ab_path, "-V"]}),
            "harness_rps": harness_rps, "bare_rps": bare_rps,
            "harness_rps_median": statistics.median(harness_rps), "bare_rps_median": statistics.median(bare_rps),
            "difference_percent": result.difference_percent,
        })
    return result


def load_latest_overhead(directory: Path) -> tuple[dict, Path]:
    """The newest overhead.json under data/harness-overhead/, and its path."""
    files = sorted(directory.glob("*/overhead.json"))
    if not files:
        raise BenchError(f"{directory}: no harness benchmark recorded: run `invoke overhead` and commit it")
    try:
        return json.loads(files[-1].read_text()), files[-1]
    except json.JSONDecodeError as error:
        raise BenchError(f"{files[-1]}: not valid JSON ({error}): re-run `invoke overhead`") from None
