"""Downloads under each results table: the results as CSV and the whole run as JSON.

A results directive asks for its run's files with `export_links`; when an HTML build finishes,
`write_exports` writes them to _data/RECIPE/RUN-ID.{csv,json} in the output (only those that are
missing or older than their run.json, so a rebuild with nothing changed writes nothing).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from benchsite.model.run import FORMAT_VERSION, RUN_FILE, RunDocument
from benchsite.results.export import results_csv
from benchsite.results.store import load_view

EXPORT_DIR = "_data"


def _exports(env: BuildEnvironment) -> dict[str, set[str]]:
    if not hasattr(env, "bench_exports"):
        env.bench_exports = {}  # type: ignore[attr-defined]
    return env.bench_exports  # type: ignore[attr-defined]


def export_links(env: BuildEnvironment, run: RunDocument) -> nodes.paragraph:
    """The download links of one run, relative to the page that shows them."""
    _exports(env).setdefault(env.docname, set()).add(str(run.path))
    base = "../" * env.docname.count("/") + f"{EXPORT_DIR}/{run.recipe}/{run.run_id}"
    paragraph = nodes.paragraph(classes=["bench-downloads"], text="Take the data away: ")
    paragraph += nodes.reference(text="these results as CSV", refuri=f"{base}.csv")
    paragraph += nodes.Text(" (medians, intervals, CPU per request, flags: one row per subject and load), ")
    paragraph += nodes.reference(text="the whole run as JSON", refuri=f"{base}.json")
    paragraph += nodes.Text(f" (every repetition, command and parsed result; format version {FORMAT_VERSION}).")
    return paragraph


def purge_exports(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _exports(env).pop(docname, None)


def merge_exports(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    for docname in docnames:
        if docname in _exports(other):
            _exports(env)[docname] = _exports(other)[docname]


def write_exports(app: Sphinx, exception: Exception | None) -> None:
    """Write every requested run's CSV and JSON into the HTML output."""
    if exception is not None or app.builder.format != "html":
        return
    for run_dir in sorted({path for paths in _exports(app.env).values() for path in paths}):
        run_file = Path(run_dir) / RUN_FILE
        if not run_file.is_file():
            continue
        folder = Path(app.outdir) / EXPORT_DIR / Path(run_dir).parent.name  # data/RECIPE/RUN-ID
        csv_file, json_file = folder / f"{Path(run_dir).name}.csv", folder / f"{Path(run_dir).name}.json"
        if csv_file.is_file() and csv_file.stat().st_mtime >= run_file.stat().st_mtime:
            continue  # up to date: a rebuild with nothing changed reads no run
        view = load_view(Path(run_dir))
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run_file, json_file)
        csv_file.write_text(results_csv(view))


def setup_exports(app: Sphinx) -> dict[str, Any]:
    app.connect("env-purge-doc", purge_exports)
    app.connect("env-merge-info", merge_exports)
    app.connect("build-finished", write_exports)
    return {}
