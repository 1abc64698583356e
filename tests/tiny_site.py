"""A one-page Sphinx project built in-process (sphinx.testing): the extension's directives on the runs of one
data folder, without the cost of the whole site (which the end-to-end and committed-site builds cover)."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from html import unescape
from pathlib import Path

from sphinx.testing.util import SphinxTestApp

from conftest import REPO


@dataclass(frozen=True)
class Built:
    html: str
    text: str  # the HTML's text, tags dropped
    warnings: list[str]
    outdir: Path


def build(
    tmp_path: Path,
    body: str,
    builder: str = "html",
    extensions: tuple[str, ...] = (),
    data_dir: Path | None = None,
    profile: str = "full",
    recipes_dir: Path = REPO / "recipes",
    page: str = "index",
) -> Built:
    """Build `page` (index, or recipes/NAME for a recipe's page) = body with the extension on data_dir
    (tmp_path/data unless given) and recipes_dir, showing the runs of `profile`; warnings are collected, not
    fatal."""
    source = tmp_path / "src"
    source.mkdir(parents=True, exist_ok=True)
    (source / "conf.py").write_text(
        f"extensions = {['benchsite.sphinxext', *extensions]!r}\nsmartquotes = False\n"
        "rinoh_documents = [{'doc': 'index', 'target': 'tiny', 'title': 'Tiny'}]\n"
        f"bench_data_dir = {str(data_dir or tmp_path / 'data')!r}\n"
        f"bench_recipes_dir = {str(recipes_dir)!r}\n"
        f"bench_conf_dir = {str(REPO / 'conf')!r}\n"
        f"bench_profile = {profile!r}\n"
    )
    if page != "index":
        (source / "index.rst").write_text(f"Test site\n=========\n\n.. toctree::\n\n   {page}\n")
    (source / f"{page}.rst").parent.mkdir(parents=True, exist_ok=True)
    (source / f"{page}.rst").write_text(body if page != "index" else "Test page\n=========\n\n" + body)
    warnings = io.StringIO()
    app = SphinxTestApp(builder, srcdir=source, status=io.StringIO(), warning=warnings, freshenv=True)
    try:
        app.build()
    finally:
        app.cleanup()
    output = Path(app.outdir)
    written = output / (f"{page}.html" if builder == "html" else f"{page}.txt")
    html = written.read_text() if written.exists() else ""
    text = unescape(re.sub(r"<[^>]+>", " ", html))
    lines = [line for line in warnings.getvalue().splitlines() if "WARNING" in line or "ERROR" in line]
    return Built(html, re.sub(r"\s+", " ", text), lines, output)
