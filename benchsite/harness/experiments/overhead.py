"""A benchmark of the harness itself: its req/s against a bare `ab` run of the same argv.

Both run against one server, interleaved (alternating which goes first), so the
machine's drift hits both alike. The raw outputs and the figures are stored
under data/harness-overhead/<run-id>/.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.basics.environment import collect_environment, utc_now
from benchsite.harness.basics.probes import http_get, wait_until_ready
from benchsite.harness.basics.subjects import base_values
from benchsite.harness.engine.preflight import effective_settings
from benchsite.harness.hosts.placement import on_this_machine
from benchsite.harness.processes.machine_lock import holding_the_machine
from benchsite.harness.processes.processes import LOOPBACK, Launch, free_port, running_server
from benchsite.harness.session.context import RunContext
from benchsite.harness.session.load_argv import cell_argv
from benchsite.harness.session.repetition import measure
from benchsite.harness.session.start import verify_reply
from benchsite.model.overhead import (
    OVERHEAD_DIR,
    OVERHEAD_FILE,
    OVERHEAD_FORMAT_VERSION,
    OverheadRecord,
    OverheadSettings,
)
from benchsite.model.recipe import Recipe, Server
from benchsite.results.store import new_run_id, staged_run_directory, write_json
from benchsite.tools import ab, external_load


def _bare_ab(argv: list[str], cpu: int | None, raw_path: Path) -> float:
    """ab exactly as a user would type it (pinned with taskset), outside the harness."""
    command = (["taskset", "-c", str(cpu)] if cpu is not None else []) + argv
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    raw_path.write_text(completed.stdout)
    if completed.returncode != 0:
        raise BenchError(f"bare ab failed with exit code {completed.returncode}: {completed.stderr.strip()[-200:]}")
    return ab.parse_ab_output(completed.stdout).requests_per_s


@holding_the_machine
def compare_with_bare_ab(
    recipe: Recipe, subject_name: str, cell_name: str, rounds: int, requests: int, data_dir: Path, repo: Path
) -> tuple[OverheadRecord, Path]:
    """Interleave `rounds` harness runs and bare ab runs of one ab cell against one server."""
    subject, named = recipe.subject(subject_name), recipe.cell(cell_name)
    cell = None if named is None else external_load(named)
    if not isinstance(subject, Server) or cell is None or cell.TOOL is not ab.TOOL:
        raise BenchError(
            f"no server {subject_name!r} or ab cell {cell_name!r} in {recipe.name}: servers are "
            f"{', '.join(s.name for s in recipe.subjects if isinstance(s, Server))}; ab cells are "
            f"{', '.join(c.name for c in recipe.cells if c.TOOL is ab.TOOL)}"
        )
    settings = effective_settings(recipe.settings)
    run_id = new_run_id("overhead").removesuffix("-overhead")
    started_at = utc_now()
    with staged_run_directory(data_dir / OVERHEAD_DIR, run_id) as run_dir:
        port = free_port()
        argv = subject.command({**base_values(recipe), "port": str(port)})
        harness_rps: list[float] = []
        bare_rps: list[float] = []
        launch = Launch(
            name=subject.name,
            argv=argv,
            port=port,
            cpu=settings.server_cpu,
            log_path=run_dir / "server.log",
            cwd=recipe.directory,
        )
        with running_server(launch) as server:
            wait_until_ready(server, lambda: http_get(port, subject.path), settings.start_timeout_s)
            verify_reply(subject, http_get(port, subject.path))
            ab_argv = cell_argv(server, subject, cell, requests=requests, settings=settings, address=LOOPBACK)
            # the harness's own repetition, in a run of its own: a profile of these rounds and requests
            profile = recipe.profile("full").model_copy(
                update={"name": "overhead", "requests": requests, "rounds": rounds}
            )
            context = RunContext(
                hosts=on_this_machine(repo), recipe=recipe, profile=profile, settings=settings, run_dir=run_dir
            )
            (run_dir / "bare").mkdir()
            _bare_ab(ab_argv, settings.load_cpu, run_dir / "bare" / "warm-up.txt")
            for index in range(1, rounds + 1):
                order = ("harness", "bare") if index % 2 else ("bare", "harness")
                for way in order:
                    if way == "harness":
                        rep = measure(context, server, cell, ab_argv, subject=subject.name, index=index)
                        if rep.result is None:
                            raise BenchError(f"harness run {index} failed: {rep.error}")
                        harness_rps.append(rep.result.requests_per_s)
                    else:
                        bare_rps.append(_bare_ab(ab_argv, settings.load_cpu, run_dir / "bare" / f"rep-{index}.txt"))
        record = OverheadRecord(
            format_version=OVERHEAD_FORMAT_VERSION,
            recipe=recipe.name,
            subject=subject.name,
            cell=cell.name,
            ab_argv=tuple(ab_argv),
            rounds=rounds,
            started_at=started_at,
            finished_at=utc_now(),
            settings=OverheadSettings(server_cpu=settings.server_cpu, load_cpu=settings.load_cpu),
            environment=collect_environment(repo, list(recipe.packages), {"ab": [settings.program(ab.TOOL), "-V"]}),
            harness_rps=tuple(harness_rps),
            bare_rps=tuple(bare_rps),
        )
        write_json(run_dir / OVERHEAD_FILE, record.to_json())
    return record, data_dir / OVERHEAD_DIR / run_id
