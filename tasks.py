"""Tasks: run benchmark recipes, build and preview the site, test, set up the machine.

`invoke --list` shows them; `invoke --help TASK` explains every argument.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from invoke import Collection, Context, Exit

from benchsite.harness.processes.signals import handle_signals_from_the_start

handle_signals_from_the_start()  # before anything else of the project is imported, let alone spawned

# ruff: noqa: E402 - the rest comes after the signal handlers, on purpose
from benchsite.commands.invoking import (
    INTERRUPTED_SET_UP,
    help_for_a_task_first,
    quiet_when_the_reader_leaves,
    reported,
    reported_saying,
    task,
)
from benchsite.commands.options import HELP
from benchsite.errors import BenchError

if TYPE_CHECKING:
    from benchsite.commands.recipe import Where

ROOT = Path(__file__).resolve().parent
APT_PACKAGES_FILE = ROOT / "conf" / "apt-packages.txt"


def _path(c: Context, key: str) -> Path:
    """A directory from the `bench` config section, relative to the repository root."""
    return ROOT / c.config.bench[key]


def _where(c: Context, target: Path) -> Where:
    """The project's folders, with new runs going to target."""
    from benchsite.commands.recipe import Where

    return Where(
        repo=ROOT,
        recipes=_path(c, "recipes_dir"),
        conf=_path(c, "conf_dir"),
        data=_path(c, "data_dir"),
        target=target,
    )


@task(help=HELP["recipe"])
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
    budget: int = 0,
) -> None:
    """Run a benchmark recipe against real servers and store a new run under data/."""
    from benchsite.commands.recipe import Asked, RunChoices, session

    target = Path(data_dir).resolve() if data_dir else _path(c, "data_dir")
    where = _where(c, target)
    choices = RunChoices(wait_for_quiet=wait, accept_busy=accept_busy, budget_s=budget)
    asked = Asked(
        name=name, profile=profile, clean=clean, hosts=hosts, machine=machine, keep_going=keep_going, choices=choices
    )
    session(asked, where)


def _shown(path: Path) -> Path:
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


@task
def recipes(c: Context) -> None:
    """List the recipes with their latest stored run."""
    from benchsite.commands.recipe import list_recipes

    list_recipes(_path(c, "recipes_dir"), _path(c, "conf_dir"), _path(c, "data_dir"))


@task(help=HELP["docs"])
def docs(c: Context, data_dir: str = "", output: str = "", profile: str = "full") -> None:
    """Build the site from the committed data (no benchmark runs), warnings fatal."""
    from sphinx.cmd.build import build_main

    target = Path(output).resolve() if output else _path(c, "build_dir")
    # -q: warnings only; -j auto: pages are read and written on every CPU (the same site, a second sooner here)
    argv = ["-W", "-n", "--keep-going", "-q", "-j", "auto", "-b", "html", str(_path(c, "docs_dir")), str(target)]
    if data_dir:
        argv += ["-D", f"bench_data_dir={Path(data_dir).resolve()}"]
    if profile != "full":
        argv += ["-D", f"bench_profile={profile}"]
    if build_main(argv) != 0:
        raise Exit("error: the docs build failed: fix the warnings above", code=1)
    print(f"built the site in {_shown(target)}: open index.html there, or `.venv/bin/invoke serve`", file=sys.stderr)


@task(help=HELP["pdf"])
@reported
def pdf(c: Context, output: str = "") -> None:
    """The whole site as one PDF with its charts (rinohtype's builder), from the committed data."""
    from benchsite.commands.pdf import build_pdf

    target = Path(output).resolve() if output else _path(c, "docs_dir") / "_build" / "pdf"
    print("building the PDF (about two minutes; rinohtype's progress goes to pdf.log)", file=sys.stderr)
    built = build_pdf(_path(c, "docs_dir"), target)
    print(f"wrote {_shown(built.path)}: {built.pages} pages in {built.seconds:.0f} s, at most {built.peak_gb:.2f} GB")


@task(help=HELP["serve"])
@reported
def serve(c: Context, port: str = "8000") -> None:
    """Preview the built site on http://127.0.0.1:PORT/ (build it first with `invoke docs`)."""
    from benchsite.commands.serve import serve_site

    serve_site(_path(c, "build_dir"), port)


FAST_TIER = "not (integration or browser or two_hosts or sweep)"


@task(help=HELP["test"])
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


@task(help=HELP["overhead"])
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
    from benchsite.commands.experiments import overhead as compare_with_bare_ab

    where = _where(c, _path(c, "data_dir"))
    print(
        "\n".join(
            compare_with_bare_ab(recipe=recipe_name, subject=subject, cell=cell, runs=(rounds, requests), where=where)
        )
    )


@task(help=HELP["new_page"])
@reported
def new_page(c: Context, name: str, title: str = "") -> None:
    """Scaffold a working recipe: its subject, cell and profiles, its conf, its page and its test."""
    from benchsite.commands.scaffold import new_page as scaffold

    written = scaffold(name, ROOT, title)
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    print(f"next: .venv/bin/invoke recipe {name} --profile quick && .venv/bin/invoke docs")


@task(help=HELP["hogbench"])
@reported
def hogbench(c: Context, name: str = "cherrypy-speed", profile: str = "full", pairs: int = 6, seed: int = 1) -> None:
    """Benchmark the interference rule: quiet runs, each followed by one with a CPU hog on the servers' CPU for a
    random 30-60 % of it; writes data/method/interference.toml for the calibration page."""
    from benchsite.commands.experiments import hogbench as hogged_pairs

    written = hogged_pairs(_where(c, _path(c, "data_dir")), name, profile, (pairs, seed))
    print(f"wrote {_shown(written)} and {2 * pairs} runs")


@task(help=HELP["compare"])
@reported
def compare(c: Context, run_a: str, run_b: str) -> None:
    """Compare two runs of a recipe cell by cell: the change in req/s, its simultaneous interval, significance."""
    from benchsite.commands.compare import compare as compare_two

    compare_two(run_a, run_b, _path(c, "data_dir"))


@task(help=HELP["versus"], positional=["name"])
@reported
def versus(
    c: Context,
    name: str,
    b: str = "",
    a: str = "checkout",
    subjects: str = "",
    profile: str = "versus",
    data_dir: str = "",
    clean: bool = False,
    machine: str = "",
    keep_going: bool = False,
    wait: bool = True,
    accept_busy: bool = False,
    aa: bool = False,
    budget: int = 0,
) -> None:
    """Did it change? Two variants of a recipe's subjects measured in one run, interleaved round by round:
    B ÷ A in req/s (paired rounds) and in instructions per request (callgrind). For example:
    `.venv/bin/invoke versus cherrypy-speed -b dir:~/patched` or `... versus cherrypy-speed -a cheroot==10.0.1
    -b cheroot==11.1.2`."""
    from benchsite.commands.recipe import Asked, RunChoices, SidesRuns, session
    from benchsite.commands.versus import EXPERIMENT_DIR

    target = Path(data_dir).resolve() if data_dir else _path(c, "data_dir") / EXPERIMENT_DIR
    where = _where(c, target)
    chosen = tuple(s.strip() for s in subjects.split(",") if s.strip())
    choices = RunChoices(wait_for_quiet=wait, accept_busy=accept_busy, budget_s=budget)
    sides = (a, b or (a if aa else ""))  # an A/A run may leave B out: A again
    kind = SidesRuns(sides, chosen, aa)
    asked = Asked(
        name=name,
        profile=profile,
        clean=clean,
        hosts="",
        machine=machine,
        keep_going=keep_going,
        choices=choices,
        kind=kind,
    )
    session(asked, where)


@task(help=HELP["bisect"], positional=["name"])
@reported
def bisect(
    c: Context, name: str, package: str, good: str, bad: str, repo: str, subjects: str = "", cells: str = "",
    profile: str = "", budget: int = 0, data_dir: str = "",
) -> None:  # fmt: skip
    """Which commit made it slower? Down a package's git history from --good to --bad by A/B runs, each kept."""
    from benchsite.commands.bisect import BISECT_DIR, Asking, bisect_asked

    target = Path(data_dir).resolve() if data_dir else _path(c, "data_dir") / BISECT_DIR
    asking = Asking.given(name, package, (good, bad), repo, lists=(subjects, cells), profile=profile, budget_s=budget)
    print(f"wrote {_shown(bisect_asked(asking, _where(c, target)))}")


@task(help=HELP["powerbench"])
@reported
def powerbench(
    c: Context, runs: int = 10, profile: str = "power", hog: bool = False, seed: int = 1, resume: bool = False
) -> None:
    """Benchmark `invoke versus`: A/B runs of the framework app slowed by 0 and 0.5 % of its instructions and 1 %
    of its time (--hog: 0 and 5 % of its time, a CPU hog on the servers' CPU in each run); writes
    data/method/power.toml (power-busy.toml) for the calibration page."""
    from benchsite.commands.experiments import powerbench as power_bench

    written = power_bench(_where(c, _path(c, "data_dir")), runs, profile, (hog, seed, resume))
    print(f"wrote {_shown(written)}")


@task(help=HELP["faults"])
@reported
def faults(c: Context, runs: int = 40, seed: int = 1, max_delay: float = 12.0, kill: bool = False) -> None:
    """Benchmark the clean-up: signals at random moments of real quick runs, then count what they left."""
    from benchsite.commands.experiments import faults as signalled_runs

    signalled_runs(runs, seed, max_delay, kill=kill, repo=ROOT)


@task(help=HELP["byo"])
@reported
def byo(c: Context, name: str, source: str = "") -> None:
    """Build a system no package registry offers (with the project's patches); the recipes then run it."""
    from benchsite.commands.machine import byo as build

    print("\n".join(build(name, source, ROOT, _path(c, "conf_dir"))))


@task(help=HELP["hosts_setup"])
@reported_saying(INTERRUPTED_SET_UP)
def hosts_setup(c: Context, hosts: str, offline: bool = False) -> None:
    """Set up hosts for `invoke recipe --hosts`: sync the project, install packages and the venv there."""
    from benchsite.commands.machine import hosts_setup as set_up
    from benchsite.commands.machine import to_stderr

    set_up(hosts, offline, ROOT, to_stderr)
    print(f"ready: .venv/bin/invoke recipe NAME --hosts {shlex.quote(hosts)}", file=sys.stderr)


@task
@reported
def wheels(c: Context) -> None:
    """Build the wheels a second host installs from (`hosts-setup --offline`, the tests' two-host lab), once."""
    from benchsite.commands.machine import wheels as build_wheels

    print(f"wheels ready in {_shown(build_wheels(ROOT))}", file=sys.stderr)


@task(help=HELP["add_run"])
@reported
def add_run(c: Context, path: str, data_dir: str = "") -> None:
    """Add a run made on another machine to data/, after checking it whole (schema, machine, raw outputs)."""
    from benchsite.commands.add_run import add_run_said

    target_dir = Path(data_dir).resolve() if data_dir else _path(c, "data_dir")
    said = add_run_said(
        path=Path(path),
        data_dir=target_dir,
        recipes_dir=_path(c, "recipes_dir"),
        conf_dir=_path(c, "conf_dir"),
        root=ROOT,
    )
    print(said, file=sys.stderr)


@task(help=HELP["upgrade_data"])
@reported
def upgrade_data(c: Context, data_dir: str = "") -> None:
    """Rewrite every stored run.json and overhead.json in the current format (raw outputs untouched)."""
    from benchsite.commands.add_run import upgraded

    directory = Path(data_dir).resolve() if data_dir else _path(c, "data_dir")
    for line in upgraded(directory):
        print(line)


@task(help=HELP["sweep_envs"])
@reported
def sweep_envs(c: Context, name: str, profile: str = "sweep") -> None:
    """Make (or find) the environment of every release a sweep profile names, under build/sweep/: each release
    with the dependencies of its time."""
    from benchsite.commands.sweep import sweep_envs as make_them

    make_them(name, profile, _path(c, "recipes_dir"), _path(c, "conf_dir"))


@task
def setup(c: Context) -> None:
    """Install the system packages the recipes need (ab, wrk...): as root, or print the command."""
    packages = APT_PACKAGES_FILE.read_text().split()
    if os.geteuid() != 0:
        print("run as root:\n  apt-get update && apt-get install -y " + " ".join(packages))
        return
    for argv in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *packages]):
        if subprocess.run(argv).returncode != 0:
            raise Exit(f"error: `{' '.join(argv)}` failed: see apt's message above", code=1)


ns = Collection(
    recipe,
    recipes,
    docs,
    pdf,
    serve,
    test,
    overhead,
    compare,
    versus,
    bisect,
    powerbench,
    faults,
    hogbench,
    new_page,
    upgrade_data,
    add_run,
    setup,
    byo,
    hosts_setup,
    wheels,
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
quiet_when_the_reader_leaves()
help_for_a_task_first(ns)
