"""Tasks: run benchmark recipes, build and preview the site, test, set up the machine.

`invoke --list` shows them; `invoke --help TASK` explains every argument.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from invoke import Collection, Context, Exit, Task
from invoke import task as invoke_task

from benchsite.harness.signals import handle_signals_from_the_start, ignore_signals, task_began

handle_signals_from_the_start()  # before anything else of the project is imported, let alone spawned

from benchsite.errors import BenchError  # noqa: E402 - after the signal handlers, on purpose

if TYPE_CHECKING:
    from benchsite.model.overhead import OverheadRecord

ROOT = Path(__file__).resolve().parent
APT_PACKAGES_FILE = ROOT / "conf" / "apt-packages.txt"
F = TypeVar("F", bound=Callable[..., Any])


class BenchTask(Task):
    """A task whose short flags leave -h to invoke's help (`--hosts` is -o, not -h)."""

    def arg_opts(self, name: str, default: str, taken_names: set[str]) -> dict[str, Any]:
        return super().arg_opts(name, default, taken_names | {"h"})


def task(*args: Any, **kwargs: Any) -> Any:
    """invoke's @task, making BenchTasks."""
    return invoke_task(*args, klass=BenchTask, **kwargs)


def reported(body: F) -> F:
    """The one way a task ends on a user's mistake: a one-line error and exit 1; Ctrl-C exits 130."""

    @functools.wraps(body)
    def run(*args: Any, **kwargs: Any) -> Any:
        task_began()
        try:
            return body(*args, **kwargs)
        except BenchError as error:
            raise Exit(f"error: {error}", code=1) from None
        except KeyboardInterrupt:
            raise Exit(
                "interrupted: every server this task started is stopped; an unfinished run is not kept", code=130
            ) from None
        finally:  # the task's outcome is settled: a signal while the interpreter exits changes nothing
            ignore_signals()

    return run  # type: ignore[return-value]


def _path(c: Context, key: str) -> Path:
    """A directory from the `bench` config section, relative to the repository root."""
    return ROOT / c.config.bench[key]


def _apt_packages() -> list[str]:
    return APT_PACKAGES_FILE.read_text().split()


@task(
    help={
        "name": "the recipe to run (see `invoke recipes`), or 'all' for every recipe",
        "profile": "'full' (the default: what the site publishes), 'quick' (a smoke run, never committed), or "
        "another profile of the recipe's conf: cherrypy-speed has 'sweep' and 'sweep-quick' (CherryPy releases) and "
        "'timed' (full's timed rounds alone), "
        "calibration 'sliced'",
        "data_dir": "where the new run directory goes (default: data/)",
        "clean": "first stop the servers and remove the folders that a killed earlier run left",
        "hosts": "run roles on other hosts over SSH: 'server=user@host,load=user@host' (either role alone "
        "is fine; the other stays here), or a TOML file with a [hosts] table; set them up with hosts-setup",
        "machine": "the name pages give this machine (a-z, 0-9, -); default: conf/machine.toml's, else one "
        "made from the CPU model and count",
        "keep_going": "exit 0 even when a subject whose software is here failed to start or to answer correctly "
        "(the run is kept either way, with the reason in the subject's row)",
        "wait": "on a busy machine, wait up to the conf's settle_wait_s for it to settle before measuring "
        "(--no-wait: start at once; the check is recorded either way)",
        "accept_busy": "let this run be a page's main run and join its machine's verdicts even if it was measured "
        "on a busy machine (recorded in the run)",
    }
)
@reported
def recipe(
    c: Context,
    name: str,
    profile: str = "full",
    data_dir: str = "",
    clean: bool = False,
    hosts: str = "",
    machine: str = "",
    keep_going: bool = False,
    wait: bool = True,
    accept_busy: bool = False,
) -> None:
    """Run a benchmark recipe against real servers and store a new run under data/."""
    from benchsite.harness.leftovers import clean as clean_leftover
    from benchsite.harness.leftovers import find_leftovers
    from benchsite.harness.preflight import check_placeable
    from benchsite.harness.progress import RichReporter
    from benchsite.harness.remote import placed
    from benchsite.harness.runner import RunChoices, run_recipe
    from benchsite.harness.signals import checkpoint, signal_for_test, signals_as_interrupt
    from benchsite.harness.start import FAILED_AT_START
    from benchsite.harness.sweep import swept
    from benchsite.model.hosts import parse_hosts
    from benchsite.model.machine import naming
    from benchsite.model.recipe import available_recipes, load_recipe
    from benchsite.results.published import published_claims
    from benchsite.results.store import list_runs, load_run

    placement = parse_hosts(hosts)
    recipes_dir, conf_dir = _path(c, "recipes_dir"), _path(c, "conf_dir")
    named = naming(machine, conf_dir)
    target = Path(data_dir).resolve() if data_dir else _path(c, "data_dir")
    names = available_recipes(recipes_dir) if name == "all" else [name]
    loaded = [load_recipe(recipe_name, recipes_dir, conf_dir) for recipe_name in names]  # all checked first
    claims = {}
    for index, each in enumerate(loaded):
        chosen = each.profile(profile)
        claims[each.name] = published_claims(each, _path(c, "data_dir"))
        if placement.remote:
            check_placeable(each)
        if chosen.releases:  # a release sweep: each release's environment, then its copies of the subjects
            if placement.remote:
                raise Exit("error: a release sweep runs on one machine: run it without --hosts", code=1)
            loaded[index], copies = swept(each, chosen, say=lambda line: print(line, file=sys.stderr))
            found = claims[each.name]
            claims[each.name] = found.for_copies(copies) if found is not None else None
    for leftover in find_leftovers(target):
        if clean:
            clean_leftover(leftover)
            print(f"removed what a killed run left: {leftover.describe()}", file=sys.stderr)
        else:
            print(
                f"warning: a killed run left {leftover.describe()}: "
                f"`.venv/bin/invoke recipe {name} --clean` removes it",
                file=sys.stderr,
            )
    broken: list[str] = []
    choices = RunChoices(wait_for_quiet=wait, accept_busy=accept_busy)
    with signals_as_interrupt(), placed(placement, ROOT) as where:  # every host reached before anything starts
        for each in loaded:
            print(f"{each.name}: {each.title} (profile {profile})", file=sys.stderr)
            before = set(list_runs(target / each.name))
            try:
                with RichReporter() as reporter:
                    run_dir = run_recipe(
                        each, profile, target, ROOT, reporter, claims[each.name], where, named, choices
                    )
                if claims[each.name] is not None:
                    _print_verdicts(run_dir, claims[each.name])
                _say_if_busy(run_dir)
                print(f"wrote {_shown(run_dir)}; build the site with `.venv/bin/invoke docs`", file=sys.stderr)
                signal_for_test("after-wrote")
                failed = [s for s in load_run(run_dir).skipped if s.reason == FAILED_AT_START]
                broken += [f"{each.name}: {s.label} ({s.name}) failed: {' '.join(s.detail.split())}" for s in failed]
                checkpoint()  # a signal something swallowed on the way (a Popen's clean-up) still counts
            except KeyboardInterrupt:
                kept = sorted(set(list_runs(target / each.name)) - before)
                if kept:  # the interrupt came after the run was complete and in place
                    raise Exit(f"interrupted after the run was kept: {_shown(kept[-1])}", code=130) from None
                raise
        if broken and not keep_going:  # still under the handlers: a late signal is an interrupt, not a crash
            raise Exit(
                f"error: {'; '.join(broken)}; the run is kept with the reason in its row: fix the subject and run "
                "again, or pass --keep-going to accept a run without it",
                code=1,
            )


def _print_verdicts(run_dir: Path, published: Any) -> None:
    """The run's verdicts on the page's claims, the thing a user ran it for, and which needed further rounds."""
    from rich.console import Console
    from rich.table import Table

    from benchsite.results.store import load_view

    view = load_view(run_dir)
    rounds = view.run.rounds
    pooled = (
        "MEASURED ON A BUSY MACHINE: the site leaves it out"
        if view.busy
        else "the site pools them with every run of it"
    )
    table = Table(title=f"Verdicts of this run ({view.run.machine.name}); {pooled}")
    for header in ("Claim", "Verdict", "This run [95 % interval]", "Rule"):
        table.add_column(header, overflow="fold")
    for verdict in published.verdicts(view):
        table.add_row(verdict.claim.id, str(verdict.status), verdict.today, verdict.claim.threshold)
    console = Console(stderr=True)
    console.print(table)
    if rounds is not None and rounds.further_repetitions:
        console.print(
            f"{rounds.made} rounds in all ({rounds.further_repetitions} repetitions in further rounds for "
            f"claims the first {rounds.minimum} left inconclusive); stopped: {rounds.stopped}",
            highlight=False,
        )


def _say_if_busy(run_dir: Path) -> None:
    """One line when the run was measured on a busy machine: what the site will do with it, and what to do."""
    from benchsite.results.store import load_view

    view = load_view(run_dir)
    if view.busy:
        print(
            f"{view.interference_said()}: the run is kept, but its machine's verdicts and the page's main results "
            "leave it out (re-run on a quiet machine, or pass --accept-busy to use it anyway)",
            file=sys.stderr,
        )


def _shown(path: Path) -> Path:
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


@task
def recipes(c: Context) -> None:
    """List the recipes with their latest stored run."""
    from benchsite.model.recipe import available_recipes, load_recipe
    from benchsite.results.store import list_runs

    for name in available_recipes(_path(c, "recipes_dir")):
        try:
            title = load_recipe(name, _path(c, "recipes_dir"), _path(c, "conf_dir")).title
        except BenchError as error:
            title = f"BROKEN: {error}"
        runs = list_runs(_path(c, "data_dir") / name)
        latest = f"{len(runs)} run(s), latest {runs[-1].name}" if runs else "no run yet"
        print(f"{name:24} {latest:45} {title}")


@task(
    help={
        "data_dir": "read runs from this directory instead of data/",
        "output": "where the HTML goes (default: docs/_build/html)",
        "profile": "show each recipe's latest run of this profile (default: full, what the site publishes)",
    }
)
def docs(c: Context, data_dir: str = "", output: str = "", profile: str = "full") -> None:
    """Build the site from the committed data (no benchmark runs), warnings fatal."""
    from sphinx.cmd.build import build_main

    target = Path(output).resolve() if output else _path(c, "build_dir")
    argv = ["-W", "-n", "--keep-going", "-q", "-b", "html", str(_path(c, "docs_dir")), str(target)]  # -q: warnings only
    if data_dir:
        argv += ["-D", f"bench_data_dir={Path(data_dir).resolve()}"]
    if profile != "full":
        argv += ["-D", f"bench_profile={profile}"]
    if build_main(argv) != 0:
        raise Exit("error: the docs build failed: fix the warnings above", code=1)
    print(f"built the site in {_shown(target)}: open index.html there, or `.venv/bin/invoke serve`", file=sys.stderr)


@task(help={"output": "where the PDF goes (default: docs/_build/pdf)"})
@reported
def pdf(c: Context, output: str = "") -> None:
    """The whole site as one PDF with its charts (rinohtype's builder), from the committed data."""
    from sphinx.cmd.build import build_main

    target = Path(output).resolve() if output else _path(c, "docs_dir") / "_build" / "pdf"
    target.mkdir(parents=True, exist_ok=True)
    print("building the PDF (a few minutes; rinohtype's progress goes to pdf.log)", file=sys.stderr)
    with (target / "pdf.log").open("w") as log, contextlib.redirect_stdout(log):
        failed = build_main(["-q", "-t", "pdf", "-b", "rinoh", str(_path(c, "docs_dir")), str(target)]) != 0
    if failed:
        raise BenchError(f"the PDF build failed: see the messages above and {_shown(target / 'pdf.log')}")
    print(f"wrote {_shown(target / 'benchmarks.pdf')}")


def _port(text: str) -> int:
    """A TCP port from the command line: 0 (any free one) to 65535."""
    if not text.isdigit() or int(text) > 65535:
        raise BenchError(f"--port {text!r} is not a port: give a number from 1 to 65535, or 0 for any free port")
    return int(text)


@task(help={"port": "port on 127.0.0.1 to serve the built site on (0: any free port)"})
@reported
def serve(c: Context, port: str = "8000") -> None:
    """Preview the built site on http://127.0.0.1:PORT/ (build it first with `invoke docs`)."""
    number = _port(port)
    directory = _path(c, "build_dir")
    if not (directory / "index.html").is_file():
        raise BenchError(f"no built site in {directory}: run `.venv/bin/invoke docs` first")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", number), handler)
    except OSError as error:
        raise BenchError(f"cannot listen on 127.0.0.1:{port} ({error.strerror}): choose another --port") from None
    with server:
        bound = server.server_address[1]
        print(f"serving {directory} on http://127.0.0.1:{bound}/ (Ctrl-C stops)", file=sys.stderr)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


FAST_TIER = "not (integration or browser or two_hosts or sweep)"


@task(
    help={
        "args": "extra pytest arguments, quoted as in a shell, e.g. '-k \"parser and not wrk\" -x'",
        "fast": "only the unit tier (no server, browser, second host or release environment): under a minute",
    }
)
@reported
def test(c: Context, args: str = "", fast: bool = False) -> None:
    """Run the test suite (real servers, real ab, real docs builds); --fast runs the unit tier alone."""
    try:
        extra = shlex.split(args)
    except ValueError as error:
        raise BenchError(f"--args {args!r} cannot be split as a shell would ({error}): fix the quoting") from None
    tier = ["-m", FAST_TIER] if fast else []
    result = subprocess.run([sys.executable, "-m", "pytest", *tier, *extra], cwd=ROOT)
    if result.returncode != 0:
        raise Exit(code=result.returncode)


@task(
    auto_shortflags=False,
    help={
        "recipe_name": "recipe whose subject to use",
        "subject": "subject name in that recipe",
        "cell": "cell name (e.g. c10, c1-k)",
        "rounds": "how many harness runs and bare ab runs, interleaved",
        "requests": "ab -n for every run",
    },
)
@reported
def overhead(
    c: Context,
    recipe_name: str = "cherrypy-speed",
    subject: str = "raw-wsgi",
    cell: str = "c10",
    rounds: int = 20,
    requests: int = 1000,
) -> None:
    """Benchmark the harness: its req/s against bare `ab` of the same argv, interleaved."""
    from benchsite.harness.overhead import compare_with_bare_ab
    from benchsite.model.recipe import load_recipe

    if rounds < 1 or requests < 1:
        raise BenchError("--rounds and --requests must be at least 1")
    loaded = load_recipe(recipe_name, _path(c, "recipes_dir"), _path(c, "conf_dir"))
    record, run_dir = compare_with_bare_ab(loaded, subject, cell, rounds, requests, _path(c, "data_dir"), ROOT)
    print(
        f"harness median {record.harness_rps_median:,.1f} req/s, bare ab median "
        f"{record.bare_rps_median:,.1f} req/s ({rounds} rounds each; raw outputs in {run_dir})"
    )
    print(f"harness ÷ bare ab, round by round: {overhead_ratio(record)}")


def overhead_ratio(record: OverheadRecord) -> str:
    """The harness's req/s over bare ab's, paired round by round, with its interval (or why none)."""
    from benchsite.results.claims import fmt_interval
    from benchsite.results.intervals import level_label, ratio_interval

    pairs = [h / b for h, b in zip(record.harness_rps, record.bare_rps, strict=False)]
    found = ratio_interval(pairs)
    if found is None or not found.bounded:
        return "no interval: fewer than two rounds"
    return f"{fmt_interval(found, digits=3)} ({level_label(found.level)} interval)"


@task(
    help={
        "name": "the new recipe's name: lowercase letters, digits and hyphens (e.g. my-servers)",
        "title": "the page's title as readers see it (e.g. 'WSGI frameworks'); default: made from the name",
    }
)
@reported
def new_page(c: Context, name: str, title: str = "") -> None:
    """Scaffold a working recipe: its subject, cell and profiles, its conf, its page and its test."""
    from benchsite.scaffold import new_page as scaffold

    written = scaffold(name, ROOT, title)
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    print(f"next: .venv/bin/invoke recipe {name} --profile quick && .venv/bin/invoke docs")


@task(
    help={
        "name": "the recipe (default: cherrypy-speed)",
        "profile": "its profile for every run (default: timed, full's timed rounds alone)",
        "pairs": "quiet runs, each followed by a hogged one (default 6)",
        "seed": "seed of the hogs' random start and length",
    }
)
@reported
def hogbench(c: Context, name: str = "cherrypy-speed", profile: str = "timed", pairs: int = 6, seed: int = 1) -> None:
    """Benchmark the interference rule: quiet runs, each followed by one with a CPU hog on the servers' CPU for a
    random 30-60 % of it; writes data/method/interference.toml for the calibration page."""
    from benchsite.harness.hogbench import hogged_pairs, method_record
    from benchsite.model.method import METHOD_DIR
    from benchsite.model.recipe import load_recipe
    from benchsite.results.store import write_text

    settings = load_recipe(name, _path(c, "recipes_dir"), _path(c, "conf_dir")).settings
    cpu = settings.server_cpu if settings.server_cpu is not None else 0
    data_dir = _path(c, "data_dir")
    quiet, hogged = hogged_pairs(ROOT, data_dir, name, profile, pairs, cpu, seed, say=print)
    write_text(data_dir / METHOD_DIR / "interference.toml", method_record(name, quiet, hogged, profile))
    print(f"wrote {_shown(data_dir / METHOD_DIR / 'interference.toml')} and {2 * pairs} runs")


@task(
    help={
        "run_a": "the first run: a run directory, or RECIPE/RUN-ID under data/",
        "run_b": "the second run, likewise (e.g. your machine's run against the published one)",
    }
)
@reported
def compare(c: Context, run_a: str, run_b: str) -> None:
    """Compare two runs of a recipe cell by cell: the change in req/s, its simultaneous interval, significance."""
    from rich.console import Console
    from rich.table import Table

    from benchsite.results.compare import busy_runs, compare_runs, describe_change, different_setups
    from benchsite.results.store import load_view

    runs = []
    for given in (run_a, run_b):
        path = Path(given) if Path(given).is_dir() else _path(c, "data_dir") / given
        if not path.is_dir():
            raise BenchError(
                f"no run {given!r}: give a run directory or RECIPE/RUN-ID (see `.venv/bin/invoke recipes`)"
            )
        runs.append(load_view(path))
    a, b = (view.run for view in runs)
    if a.recipe != b.recipe:
        raise BenchError(f"{a.run_id} is a run of {a.recipe}, {b.run_id} of {b.recipe}: compare runs of one recipe")
    for warning in (busy_runs(*runs), different_setups(*runs)):
        if warning:
            print(warning, file=sys.stderr)
    changes = compare_runs(*runs)
    if not changes:
        raise BenchError(
            f"{a.run_id} and {b.run_id} share no subject measured in the same cell: compare two runs that ran "
            "the same subjects and cells"
        )
    table = Table(
        title=f"{a.title}: B ÷ A, req/s (A = {a.run_id}, B = {b.run_id}); change = B's geometric mean ÷ A's, "
        f"its interval simultaneous over the {len(changes)} cells compared (Bonferroni); disturbed repetitions "
        "left out"
    )
    for header in ("Subject", "Cell", "A geometric mean", "B geometric mean", "Change [simultaneous 95 %]"):
        table.add_column(header)
    for change in changes:
        table.add_row(
            change.subject, change.cell, _number(change.mean_a), _number(change.mean_b), describe_change(change)
        )
    Console().print(table)


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


@task(
    help={
        "runs": "how many recipe runs to interrupt",
        "seed": "the seed of the random recipes, signals and delays (the same seed repeats the same trials)",
        "max_delay": "the latest moment, in seconds after the start, a signal is sent",
    }
)
@reported
def faults(c: Context, runs: int = 40, seed: int = 1, max_delay: float = 12.0) -> None:
    """Benchmark the clean-up: signals at random moments of real quick runs, then count what they left."""
    from collections import Counter

    from benchsite.harness.faults import inject

    trials = inject(runs, seed, max_delay, ROOT)
    for each in trials:
        state = "clean" if each.clean else f"LEFT {each.processes} {each.ports} {each.staging} {each.workroots}"
        sent = "" if each.signalled else " (ended before its signal)"
        print(
            f"{each.recipe:20} {each.signal_name:8} after {each.delay_s:5.2f} s: exit {each.exit_code:4}  {state}{sent}"
        )
    interrupted = [each for each in trials if each.signalled]
    codes = Counter((each.signal_name, each.exit_code) for each in interrupted)
    print("signal, exit code: trials —", ", ".join(f"{s} {code}: {n}" for (s, code), n in sorted(codes.items())))
    print(
        f"{len(interrupted)} runs interrupted, {len(trials) - len(interrupted)} ended before their signal; in all: "
        f"{sum(len(t.processes) for t in trials)} leftover processes, "
        f"{sum(len(t.ports) for t in trials)} bound ports, {sum(t.staging for t in trials)} partial run folders, "
        f"{sum(t.workroots for t in trials)} temporary folders"
    )
    if not all(each.clean for each in trials):
        raise BenchError("some interrupted runs left something behind: see the lines marked LEFT")


@task(
    help={
        "name": "the system to build: fapws3, cherokee or wsgiboost (conf/byo.toml)",
        "source": "your checkout of the system's upstream repository (fapws3 defaults to its pinned PyPI archive)",
    }
)
@reported
def byo(c: Context, name: str, source: str = "") -> None:
    """Build a system no package registry offers (with the project's patches); the recipes then run it."""
    from benchsite.harness.byo import Builder, local_path
    from benchsite.harness.signals import signals_as_interrupt

    folder = Path(source).expanduser().resolve() if source else None
    if folder is not None and not folder.is_dir():
        raise BenchError(f"--source {source}: no such folder: pass your checkout of the system's repository")
    with signals_as_interrupt():  # Ctrl-C or a kill stops the build command too (subprocess.run kills it)
        record = Builder(ROOT, _path(c, "conf_dir"), name).build(folder)
    print(f"built {record.summary}")
    print(f"  from {record.source}")
    for provided in record.files:
        print(f"  provides {provided.provides}: {local_path(provided.path, ROOT)} (sha256 {provided.sha256[:12]}…)")


@task(
    help={
        "hosts": "the hosts to set up: 'server=user@host,load=user@host', or a TOML file with a [hosts] table",
        "offline": "for hosts that cannot reach PyPI: build the wheels here and copy them over",
    }
)
@reported
def hosts_setup(c: Context, hosts: str, offline: bool = False) -> None:
    """Set up hosts for `invoke recipe --hosts`: sync the project, install packages and the venv there."""
    from benchsite.harness.provision import set_up
    from benchsite.harness.signals import signals_as_interrupt
    from benchsite.model.hosts import parse_hosts

    placement = parse_hosts(hosts)
    if not placement.remote:
        raise BenchError("--hosts names no host: give server=user@host and/or load=user@host")
    with signals_as_interrupt():
        for role, entry in placement.roles().items():
            set_up(entry, role, ROOT, offline, lambda line: print(line, file=sys.stderr))
    print(f"ready: .venv/bin/invoke recipe NAME --hosts {shlex.quote(hosts)}", file=sys.stderr)


@task(
    help={
        "path": "a run directory made elsewhere (data/RECIPE/RUN-ID of another checkout)",
        "data_dir": "the data directory it joins (default: data/)",
    }
)
@reported
def add_run(c: Context, path: str, data_dir: str = "") -> None:
    """Add a run made on another machine to data/, after checking it whole (schema, machine, raw outputs)."""
    from benchsite.results.contribute import add_run as add

    target_dir = Path(data_dir).resolve() if data_dir else _path(c, "data_dir")
    run, target, renamed_from = add(Path(path), target_dir, _path(c, "recipes_dir"), _path(c, "conf_dir"))
    known = f"; the run called it {renamed_from!r}, data/ knows it by this name" if renamed_from else ""
    print(
        f"added {_shown(target)} (machine {run.machine.name}, id {run.machine.id}{known}); "
        "build the site with `.venv/bin/invoke docs` and commit the run directory",
        file=sys.stderr,
    )


@task(help={"data_dir": "the data directory to upgrade (default: data/)"})
@reported
def upgrade_data(c: Context, data_dir: str = "") -> None:
    """Rewrite every stored run.json and overhead.json in the current format (raw outputs untouched)."""
    from benchsite.results.store import upgrade_data_dir

    directory = Path(data_dir).resolve() if data_dir else _path(c, "data_dir")
    for path, what in upgrade_data_dir(directory):
        print(f"upgraded {path.relative_to(directory)} {what}")


@task(help={"name": "the recipe", "profile": "its sweep profile (default: sweep)"})
@reported
def sweep_envs(c: Context, name: str, profile: str = "sweep") -> None:
    """Make (or find) the environment of every release a sweep profile names, under build/sweep/."""
    from benchsite.harness.sweep import release_env
    from benchsite.model.recipe import load_recipe

    loaded = load_recipe(name, _path(c, "recipes_dir"), _path(c, "conf_dir"))
    releases = loaded.profile(profile).releases
    if loaded.sweep is None or not releases:
        raise Exit(f"error: profile {profile!r} of {name} sweeps no releases: see its conf's [sweep]", code=1)
    started = time.monotonic()
    for release in releases:
        record = release_env(
            loaded.sweep, release, loaded.conf_path.parent, say=lambda line: print(line, file=sys.stderr)
        )
        patched = f", patched with {record.patch}" if record.patch else ""
        print(f"{record.package} {record.release}: build/sweep/{record.folder} ({record.dist_file}{patched})")
    print(f"{len(releases)} environments ready in {time.monotonic() - started:.0f} s", file=sys.stderr)


@task
def setup(c: Context) -> None:
    """Install the system packages the recipes need (ab, wrk...): as root, or print the command."""
    packages = _apt_packages()
    if os.geteuid() != 0:
        print("run as root:\n  apt-get update && apt-get install -y " + " ".join(packages))
        return
    for argv in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *packages]):
        if subprocess.run(argv).returncode != 0:
            raise Exit(f"error: `{' '.join(argv)}` failed: see apt's message above", code=1)


def _help_for_a_task_first() -> None:
    """`invoke TASK -h` shows TASK's help. invoke's parser would give -h to the task's first positional
    argument (`invoke recipe -h` ran the recipe "-h"), so that form is handed to `invoke --help TASK`."""
    argv = sys.argv
    if len(argv) == 3 and Path(argv[0]).name in ("invoke", "inv", "__main__.py") and argv[2] in ("-h", "--help"):
        if argv[1] in ns.task_names or argv[1].replace("-", "_") in ns.task_names:
            os.execv(sys.executable, [sys.executable, "-m", "invoke", "--help", argv[1]])


ns = Collection(
    recipe,
    recipes,
    docs,
    pdf,
    serve,
    test,
    overhead,
    compare,
    faults,
    hogbench,
    new_page,
    upgrade_data,
    add_run,
    setup,
    byo,
    hosts_setup,
    sweep_envs,
)
ns.configure(
    {
        "bench": {
            "recipes_dir": "recipes",
            "conf_dir": "conf",
            "data_dir": "data",
            "docs_dir": "docs",
            "build_dir": "docs/_build/html",
        }
    }
)
_help_for_a_task_first()
