"""Every task's options in words: what `invoke TASK -h` says of each (the command layer's help texts, kept apart
from tasks.py so that the tasks stay a page of signatures)."""

from __future__ import annotations

HELP: dict[str, dict[str, str]] = {
    "recipe": {
        "name": "the recipe to run (see `invoke recipes`), or 'all' for every recipe",
        "profile": "'full' (the default: what the site publishes), 'quick' (a smoke run, never committed), or "
        "another profile of the recipe's conf: cherrypy-speed has 'sweep' and 'sweep-quick' (CherryPy releases), "
        "'cheroot-sweep' and 'cheroot-sweep-quick' (the releases of cheroot, the server under it) and "
        "'timed' (full's timed rounds alone), 'versus', 'versus-fixed', 'versus-quick', 'power' and "
        "'power-sequential' (for `invoke versus` and `invoke powerbench`), 'bisect' (each step of `invoke bisect`), "
        "'slices-500', 'slices-1000' and "
        "'slices-2000' (A/B slices compared), 'latency-quick' (the open-loop latency profile alone, short), "
        "'cheroot-wall' (cheroot 8.0.0 and 8.1.0 by wall clock), wsgi-servers 'ceiling' and 'ceiling-k' (the open-loop "
        "tool's ceiling, new connections and kept-alive ones), calibration 'sliced'",
        "data_dir": "where the new run directory goes (default: data/)",
        "clean": "first stop the servers and remove the folders that a killed earlier run left, and the A/B sides "
        "under build/variants/ that this run does not use",
        "hosts": "run roles on other hosts over SSH: 'server=user@host,load=user@host' (either role alone "
        "is fine; the other stays here), or a TOML file with a [hosts] table; set them up with hosts-setup",
        "machine": "the name pages give this machine (a-z, 0-9, -); default: conf/machine.toml's, else one "
        "made from the CPU model and count",
        "keep_going": "exit 0 even when a subject whose software is here failed to start or to answer correctly "
        "(the run is kept either way, with the reason in the subject's row)",
        "wait": "wait for another benchmark on this machine to end, and on a busy machine up to the conf's "
        "settle_wait_s for it to settle (--no-wait: exit 1 if another benchmark holds the machine, start at once on "
        "a busy one; the check is recorded either way)",
        "accept_busy": "count this run's disturbed repetitions as figures (their req/s may be low: others' work "
        "slowed them), so that a busy machine still gives every cell a figure (recorded in the run)",
        "budget": "the run's time budget in seconds instead of its profile's time_budget_s (further rounds stop "
        "where another would overrun it, less what follows the rounds; recorded in the run)",
    },
    "docs": {
        "data_dir": "read runs from this directory instead of data/",
        "output": "where the HTML goes (default: docs/_build/html)",
        "profile": "show each recipe's latest run of this profile (default: full, what the site publishes)",
    },
    "pdf": {"output": "where the PDF goes (default: docs/_build/pdf)"},
    "serve": {"port": "port on 127.0.0.1 to serve the built site on (0: any free port)"},
    "test": {
        "args": "extra pytest arguments, quoted as in a shell, e.g. '-k \"parser and not wrk\" -x'",
        "fast": "only the unit tier (no server, browser, second host or release environment): under a minute",
    },
    "overhead": {
        "recipe_name": "recipe whose subject to use",
        "subject": "subject name in that recipe",
        "cell": "cell name (e.g. c10, c1-k)",
        "rounds": "how many harness runs and bare ab runs, interleaved",
        "requests": "ab -n for every run",
    },
    "new_page": {
        "name": "the new recipe's name: lowercase letters, digits and hyphens (e.g. my-servers)",
        "title": "the page's title as readers see it (e.g. 'WSGI frameworks'); default: made from the name",
    },
    "hogbench": {
        "name": "the recipe (default: cherrypy-speed)",
        "profile": "its profile for every run (default: full; timed is full's timed rounds alone)",
        "pairs": "quiet runs, each followed by a hogged one (default 6)",
        "seed": "seed of the hogs' random start and length",
    },
    "compare": {
        "run_a": "the first run: a run directory, or RECIPE/RUN-ID under data/",
        "run_b": "the second run, likewise (e.g. your machine's run against the published one)",
    },
    "versus": {
        "name": "the recipe whose subjects are measured twice",
        "a": "side A (default: checkout): checkout, dir:PATH (a folder of changed source files), rev:REV (a git "
        "revision of this checkout), NAME==VERSION (any distribution the subjects run on that version, everything "
        "else as the checkout has it; several joined by commas: CherryPy==17.4.2,cheroot==6.5.0), release:VERSION or "
        "release:NAME==VERSION (a release in the environment of its time, as a sweep runs it), opt:--FLAG=VALUE "
        "(that option of the subjects' commands set to VALUE), NAME@git:REPO#REV (distribution NAME built from "
        "its git repository, a URL or a local clone, at that revision) or NAME@dir:PATH (built from a source folder)",
        "b": "side B, in the same forms (with --aa, left out: A again)",
        "subjects": "the subjects to measure, comma-separated (default: those either side changes)",
        "profile": "the recipe's profile for it (default: versus, sequential: it stops once every cell is decided; "
        "versus-fixed: twelve rounds whatever they show)",
        "data_dir": "where the run's recipe folder goes (default: data/experiments/versus/)",
        "clean": "first stop the servers and remove the folders that a killed earlier run left, and the A/B sides "
        "under build/variants/ that this run does not use",
        "machine": "the name pages give this machine (default: conf/machine.toml's, else one from the CPU)",
        "keep_going": "exit 0 even when a side's subject failed to start or to answer correctly",
        "wait": "wait for another benchmark on this machine to end, then up to settle_wait_s for a busy machine "
        "(--no-wait: exit 1 if another benchmark holds it, start at once on a busy one)",
        "accept_busy": "count this run's disturbed repetitions in its tables (their req/s may be low); its changes "
        "are called from rounds paired by the interference each side met, either way",
        "budget": "the run's time budget in seconds instead of the profile's (250 s for versus): more rounds for "
        "a small change or a busy machine (recorded in the run)",
        "aa": "measure the run even where B runs the same files, versions and commands as A (an A/A run: what the "
        "method calls a change when there is none)",
    },
    "bisect": {
        "name": "the recipe whose subjects are measured",
        "package": "the distribution whose history is searched (one the subjects run: cheroot)",
        "good": "a revision of it that is not slow (a tag, branch or commit: v8.0.0)",
        "bad": "a later revision that is (v8.1.0)",
        "repo": "its git repository: a URL, or a local clone (a machine without the network)",
        "subjects": "the subjects to measure, comma-separated (default: those that run the package)",
        "cells": "the cells to measure, comma-separated (default: the profile's)",
        "profile": "the recipe's A/B profile for each step (default: bisect where the recipe's conf has it, else "
        "versus)",
        "budget": "each step's time budget in seconds instead of the profile's",
        "data_dir": "where the bisection's folder goes (default: data/experiments/bisect/)",
    },
    "powerbench": {
        "runs": "A/B runs per injected slowdown (default 10)",
        "profile": "cherrypy-speed's profile for each run (default: power, the framework at -c 1; power-sequential: "
        "the same runs, sequential, into data/method/power-sequential.toml)",
        "hog": "measure on a busy machine: each run with a busy loop on the servers' CPU for a random 30-60 % of it "
        "(writes data/method/power-busy.toml)",
        "seed": "with --hog, the seed of the hogs' random shares and moments",
        "resume": "go on with the record an interrupted run left (it is rewritten after every A/B run), making each "
        "level's runs up to --runs",
    },
    "faults": {
        "runs": "how many recipe runs to interrupt",
        "seed": "the seed of the random recipes, signals and delays (the same seed repeats the same trials)",
        "max_delay": "the latest moment, in seconds after the start, a signal is sent",
        "kill": "draw SIGKILL too: the run can handle nothing, its servers must die with it (its folders are "
        "left for `invoke recipe --clean`)",
    },
    "byo": {
        "name": "the system to build: fapws3, cherokee or wsgiboost (conf/byo.toml)",
        "source": "your checkout of the system's upstream repository (fapws3 defaults to its pinned PyPI archive)",
    },
    "hosts_setup": {
        "hosts": "the hosts to set up: 'server=user@host,load=user@host', or a TOML file with a [hosts] table",
        "offline": "for hosts that cannot reach PyPI: build the wheels here and copy them over",
    },
    "add_run": {
        "path": "a run directory made elsewhere (data/RECIPE/RUN-ID of another checkout)",
        "data_dir": "the data directory it joins (default: data/)",
    },
    "upgrade_data": {"data_dir": "the data directory to upgrade (default: data/)"},
    "sweep_envs": {"name": "the recipe", "profile": "its sweep profile (default: sweep)"},
}
