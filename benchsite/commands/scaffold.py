"""`invoke new-page NAME`: a working recipe, its conf, its page and its test, ready to run and build."""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from benchsite.errors import BenchError

NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
MAX_NAME = 40  # a name becomes folder, file and page names
RESERVED = {"all"}  # `invoke recipe all` runs every recipe

RECIPE = Template("""# $title: what this page compares. Add subjects and cells; see docs/contributing.rst.
title = "$title"
packages = ["cheroot"]

[[subjects]]
name = "hello"
label = "Hello app on cheroot"
argv = ["{python}", "app.py", "{port}"]
expect = { status = 200, body = "Hello" }

[matrix]
tool = "ab"
concurrency = [1, 10]
keepalive = [false]
""")

CLAIMS = Template("""# The claims the page decides on every run. This page revisits no earlier publication, so
# the claims are its own, and there are no [[results]] (a page that reproduces a published
# benchmark transcribes its figures here too: see docs/contributing.rst).
format_version = 2
source = "This page's own claims (no earlier publication)"

[[claims]]
id = "concurrency-helps"
text = "Ten concurrent clients get at least as many requests per second as one."
kind = "ratio"
numerator = ["hello", "c10"]
denominator = ["hello", "c1"]
at_least = 1.0
""")

APP = '''"""The subject of this recipe: a WSGI app on cheroot. Usage: python app.py PORT"""

import sys

from cheroot import wsgi


def app(environ, start_response):
    body = b"Hello"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


if __name__ == "__main__":
    wsgi.Server(("127.0.0.1", int(sys.argv[1])), app).safe_start()
'''

CONF = Template("""# Tunable parameters of the $name recipe.

[settings]
server_cpu = 0
load_cpu = 1
port = 0
socket_timeout_s = 30
cell_timeout_s = 300
start_timeout_s = 20
# A repetition during which others took more than this share of its wall time on the pinned CPUs is
# disturbed (left out, its req/s a lower bound), and a run with more than busy_share of its repetitions
# disturbed was measured on a busy machine (labelled on the page): see docs/contributing.rst.
disturbed_share = 0.25
busy_share = 0.25

[profiles.quick]        # a first look: one round, no further rounds
requests = 200
rounds = 1
warmup_requests = 50

[profiles.full]         # what the page publishes
requests = 1000
rounds = 5
warmup_requests = 500
# Then further rounds of the cells whose claims are still undecided (each round measures both sides of
# a claim seconds apart), and of disturbed rounds, up to 40 rounds, the whole run within 5 minutes.
max_rounds = 40
time_budget_s = 300
""")

PAGE = Template("""|recipe-title|
==============

.. The heading is the title in recipes/$name/recipe.toml: change it there, once.

.. bench-recipe:: $name

What this page measures, in a sentence or two.

.. bench-answer::

Does it hold?
-------------

This page's own claims (data/$name/published.toml). Each is a rule with a threshold, decided on
each machine by where the 95 % interval of its pooled runs lies; each line says in words which
way the figures go and how their size compares with the claim's (:ref:`the whole rule
<verdict-rule>`).

.. bench-claims::

Results
-------

.. bench-chart::


.. bench-pivot::

.. bench-details:: Every cell in detail: spread, CPU per request, latency, flags

   .. bench-results::

.. A page that reproduces a published benchmark adds its figures to published.toml and the
   directives bench-published and bench-compare (see docs/contributing.rst).

How it was measured
-------------------

.. bench-details:: The app (app.py)

   .. literalinclude:: ../../recipes/$name/app.py
      :language: python

.. bench-details:: The exact commands of the run shown

   .. bench-commands::

.. bench-details:: The machine, its software and the run's settings

   .. bench-environment::

.. bench-details:: Raw output: the verbatim report of one repetition of every cell

   .. bench-raw::

Runs of this recipe
-------------------

.. bench-details:: Every run of this recipe, machine by machine: when, with what, and each cell's median

   .. bench-history::
""")

TEST = Template('''"""The $name recipe runs against its real server (scaffolded by invoke new-page)."""

import pytest

from benchsite.model.recipe import load_recipe
from benchsite.results.store import list_runs, load_run
from conftest import REPO, run_invoke

pytestmark = pytest.mark.integration  # a real run: the machine's lock, beyond the unit tier


def test_the_quick_profile_measures_every_subject_in_every_cell(tmp_path):
    result = run_invoke("recipe", "$name", "--profile", "quick", "--data-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    run = load_run(list_runs(tmp_path / "$name")[-1])
    assert run.skipped == (), run.skipped  # every subject ran
    declared = load_recipe("$name", REPO / "recipes", REPO / "conf").subjects
    assert [s.name for s in run.subjects] == [s.name for s in declared]
    for subject in run.subjects:
        for cell in subject.cells:
            assert all(rep.ok for rep in cell.repetitions), (subject.name, cell.name)
''')


def new_page(name: str, root: Path, title: str = "") -> list[Path]:
    """Write the files of a new recipe page (titled as given, else from its name); refuse a bad name or one
    that exists."""
    if len(name) > MAX_NAME or not NAME.match(name):
        shown = name if len(name) <= MAX_NAME else name[:MAX_NAME] + "…"
        raise BenchError(
            f"{shown!r} is not a recipe name: use lowercase letters, digits and hyphens, at most {MAX_NAME} "
            "characters (like my-servers)"
        )
    data_folders = {path.name for path in (root / "data").glob("*") if path.is_dir()}  # method, experiments...
    if name in RESERVED | data_folders and not (root / "recipes" / name).exists():
        raise BenchError(f"{name!r} is taken (by `invoke recipe all` or a folder of data/): pick another name")
    title = " ".join(title.split()) or name.replace("-", " ").capitalize()
    if '"' in title or "\\" in title:
        raise BenchError(f"title {title!r}: write it without double quotes or backslashes")
    files = {
        root / "recipes" / name / "recipe.toml": RECIPE.substitute(title=title),
        root / "recipes" / name / "app.py": APP,
        root / "conf" / f"{name}.toml": CONF.substitute(name=name),
        root / "data" / name / "published.toml": CLAIMS.substitute(),
        root / "docs" / "recipes" / f"{name}.rst": PAGE.substitute(name=name),
        root / "tests" / f"test_recipe_{name.replace('-', '_')}.py": TEST.substitute(name=name),
    }
    existing = [str(path.relative_to(root)) for path in files if path.exists()]
    if existing:
        raise BenchError(f"{', '.join(existing)} already exist: pick another name or remove them")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return list(files)
