"""The chart node and how each builder writes it."""

from __future__ import annotations

import os
import posixpath
from html import escape
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective
from sphinx.writers.html5 import HTML5Translator

from benchsite.errors import BenchError
from benchsite.sphinxext.charts import render_svg


class ReportingDirective(SphinxDirective):
    """A directive whose data problems become one warning naming the file (fatal under -W), never a traceback."""

    def run(self) -> list[nodes.Node]:
        try:
            return self.render()
        except BenchError as error:
            return [self.state.document.reporter.warning(str(error), line=self.lineno)]

    def render(self) -> list[nodes.Node]:
        raise NotImplementedError


class bench_chart(nodes.General, nodes.Element):  # noqa: N801 - docutils naming
    """A chart to draw at write time; holds a Chart and its alt text."""


def chart_file(outdir: Path, imagedir: str, chart_digest: str) -> Path:
    return outdir / imagedir / f"bench-{chart_digest}.svg"


def visit_chart_html(self: HTML5Translator, node: bench_chart) -> None:
    """Draw the SVG once per distinct chart (reused when present), then an <img> to it."""
    chart = node["chart"]
    digest = chart.digest()
    path = chart_file(Path(self.builder.outdir), self.builder.imagedir, digest)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_bytes(render_svg(chart))
        os.replace(temporary, path)  # only a complete drawing gets the cache name
    src = posixpath.join(self.builder.imgpath, path.name)
    self.body.append(
        f'<figure class="bench-chart"><img src="{escape(src)}" alt="{escape(node["alt"])}" width="100%" /></figure>\n'
    )
    raise nodes.SkipNode


def visit_chart_text(self: nodes.NodeVisitor, node: bench_chart) -> None:
    self.add_text(f"[{node['alt']}]")
    raise nodes.SkipNode


def skip_chart(self: nodes.NodeVisitor, node: bench_chart) -> None:
    raise nodes.SkipNode
