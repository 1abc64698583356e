"""The extension's own nodes and how each builder writes them: charts, collapsed details, and the
`data-bench-*` attributes that name what a table or a figure shows."""

from __future__ import annotations

import hashlib
import os
import posixpath
import textwrap
from html import escape
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.writers.html5 import HTML5Translator

from benchsite.sphinxext.chartspec import Chart
from benchsite.usercache import read_cached, user_cache, write_cached


class bench_chart(nodes.General, nodes.Element):  # noqa: N801 - docutils naming
    """A chart to draw at write time; holds a Chart and its alt text."""


def drawn(chart: Chart, file_format: str, narrow: bool = False) -> bytes:
    """The chart drawn in this format (narrow: for a phone's column): from the user's cache when any build here
    drew it before (its name is the digest of its data, options, drawing code and matplotlib), else drawn now and
    kept there."""
    cached = user_cache("charts") / f"bench-{chart.digest()}{NARROW * narrow}.{file_format}"
    content = read_cached(cached)
    if content is None:
        from benchsite.sphinxext.charts import render  # matplotlib only when a chart is drawn

        content = render(chart, file_format, narrow)
        write_cached(cached, content)
    return content


NARROW = "-narrow"  # the name suffix of a chart's narrow drawing
NARROW_SCREEN = "(max-width: 768px)"  # the screens served the narrow drawing (the theme's own phone layout)


def chart_file(outdir: Path, imagedir: str, chart_digest: str, narrow: bool = False) -> Path:
    return outdir / imagedir / f"bench-{chart_digest}{NARROW * narrow}.svg"


def _written(outdir: Path, imagedir: str, chart: Chart, narrow: bool) -> Path:
    """The chart's SVG in the output folder, written once per distinct chart and width."""
    path = chart_file(outdir, imagedir, chart.digest(), narrow)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_bytes(drawn(chart, "svg", narrow))
        os.replace(temporary, path)  # only a complete drawing gets the chart's name
    return path


def visit_chart_html(self: HTML5Translator, node: bench_chart) -> None:
    """Write the chart's two SVGs once (reused when present), then a <picture> that serves the narrow one to
    phones and the wide one elsewhere, linked to the wide one full size."""
    chart = node["chart"]
    outdir = Path(self.builder.outdir)
    wide, narrow = (_written(outdir, self.builder.imagedir, chart, each) for each in (False, True))
    src, small = (escape(posixpath.join(self.builder.imgpath, path.name)) for path in (wide, narrow))
    self.body.append(
        f'<figure class="bench-chart"><a href="{src}" title="the chart full size"><picture>'
        f'<source media="{NARROW_SCREEN}" srcset="{small}" />'
        f'<img src="{src}" alt="{escape(node["alt"])}" width="100%" /></picture></a></figure>\n'
    )
    raise nodes.SkipNode


def visit_chart_text(self: nodes.NodeVisitor, node: bench_chart) -> None:
    self.add_text(f"[{node['alt']}]")
    raise nodes.SkipNode


def skip_chart(self: nodes.NodeVisitor, node: bench_chart) -> None:
    raise nodes.SkipNode


def for_other_builders(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """For builders that do not write HTML or plain text (LaTeX, PDF with rinohtype, Texinfo): each chart
    becomes an ordinary image, drawn as PDF into the output folder, with its alt text; collapsed details
    become their content under a heading; a table too wide for the page, a paragraph per row; a verbatim
    raw output, a line pointing to it (a hundred pages of listings made the PDF too big to build); an SVG
    image (a flame graph), a PNG made from it; the flag sign, a word."""
    if app.builder.format in ("html", "text"):
        return
    folder = Path(app.outdir) / "bench-charts"
    for node in list(doctree.findall(bench_chart)):
        chart = node["chart"]
        path = folder / f"bench-{chart.digest()}.pdf"
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(path.name + ".tmp")
            temporary.write_bytes(drawn(chart, "pdf"))
            os.replace(temporary, path)
        image = nodes.image(uri=str(path), alt=node["alt"], width="100%", candidates={"*": str(path)})
        node.replace_self(image)
    for details in list(doctree.findall(bench_details)):  # shown in full, under its summary
        details.replace_self([nodes.rubric(text=details["summary"]), *details.children])
    for table in list(doctree.findall(nodes.table)):
        if _columns(table) > PAGE_COLUMNS:
            table.replace_self(rows_as_fields(table))
    page_dir = Path(app.env.doc2path(docname)).parent
    for image in list(doctree.findall(nodes.image)):  # rinohtype reads no SVG: a flame graph as a PNG
        if str(image["uri"]).endswith(".svg"):
            path = rasterized(page_dir / image["uri"], folder)
            image.replace_self(nodes.image(uri=str(path), alt=image["alt"], width="100%", candidates={"*": str(path)}))
    for listing in list(doctree.findall(nodes.literal_block)):  # a verbatim raw output: a pointer to it
        if RAW_LISTING in listing["classes"]:
            listing.replace_self(nodes.paragraph(text=RAW_IN_PRINT))
        elif any(len(line) > PRINT_COLUMNS for line in listing.astext().splitlines()):  # else cut at the edge
            shell = listing.get("language") in SHELLS
            listing.rawsource = wrapped_for_print(listing.astext(), " \\" if shell else "")
            listing.children = [nodes.Text(listing.rawsource)]
    for text in list(doctree.findall(nodes.Text)):  # print's fonts have no flag sign (U+2691): a word instead
        if FLAG in text and text.parent is not None:
            text.parent.replace(text, nodes.Text(str(text).replace(FLAG, FLAG_IN_PRINT)))


def rasterized(svg: Path, folder: Path, width_px: int = 1600) -> Path:
    """An SVG drawn as a PNG (by CairoSVG) into the folder, named by its content, made once."""
    content = svg.read_bytes()
    path = folder / f"bench-{hashlib.sha256(content).hexdigest()[:16]}.png"
    if not path.exists():
        import cairosvg  # only builders of printed output need it

        folder.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        cairosvg.svg2png(bytestring=content, write_to=str(temporary), output_width=width_px)
        os.replace(temporary, path)
    return path


RAW_LISTING = "bench-raw-listing"
FLAG, FLAG_IN_PRINT = "\u2691", "[flagged]"
RAW_IN_PRINT = "(The verbatim output is on the web site's page and in the file named above.)"
PAGE_COLUMNS = 4  # a table wider than this does not fit a printed page's width: each row becomes a list
PRINT_COLUMNS = 80  # a code line longer than this runs past the printed page's edge
SHELLS = ("console", "bash", "shell", "sh")  # a command there is continued with a backslash


def wrapped_for_print(text: str, continued: str) -> str:
    """Each line longer than the printed page broken between words (never inside one), ending in `continued`
    (a shell's backslash, or nothing), its continuation indented four spaces more."""
    lines = []
    for line in text.splitlines():
        if len(line) <= PRINT_COLUMNS:
            lines.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()))
        width = PRINT_COLUMNS - len(indent) - 4 - len(continued)
        parts = textwrap.wrap(line.strip(), width, break_long_words=False, break_on_hyphens=False)
        lines += [
            (indent if number == 0 else indent + "    ") + part + (continued if number < len(parts) - 1 else "")
            for number, part in enumerate(parts)
        ]
    return "\n".join(lines)


def _columns(table: nodes.table) -> int:
    group = next(iter(table.findall(nodes.tgroup)), None)
    return int(group["cols"]) if group is not None else 0


def rows_as_fields(table: nodes.table) -> list[nodes.Node]:
    """A wide table for a printed page: each row as one paragraph, its first cell in bold, then each other
    cell as "header: content" (every cell's content kept; a cell with more than paragraphs as its text)."""
    head = next(iter(table.findall(nodes.thead)), None)
    headers = [entry.astext() for entry in head.findall(nodes.entry)] if head is not None else []
    output: list[nodes.Node] = []
    for body in table.findall(nodes.tbody):
        for row in body.children:
            entries = [child for child in row.children if isinstance(child, nodes.entry)]
            if not entries:
                continue
            paragraph = nodes.paragraph(classes=["bench-row"])
            for index, entry in enumerate(entries):
                content = _inline(entry)
                if index == 0:
                    paragraph += nodes.strong("", "", *content)
                    continue
                name = headers[index] if index < len(headers) else ""
                paragraph += nodes.Text(" · " if index > 1 else ": ")
                paragraph += nodes.emphasis(text=f"{name} ")
                paragraph.extend(content)
            output.append(paragraph)
    return output


def _inline(entry: nodes.entry) -> list[nodes.Node]:
    """A table cell's content as inline nodes: its paragraphs' children, anything else as its text."""
    if all(isinstance(child, nodes.paragraph) for child in entry.children):
        inline: list[nodes.Node] = []
        for number, child in enumerate(entry.children):
            if number:
                inline.append(nodes.Text(" "))
            inline += list(child.children)
        return inline
    return [nodes.Text(entry.astext())]


def without_data_attributes(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Every builder but HTML shows a tagged figure or block as its content alone."""
    if app.builder.format == "html":
        return
    for node in list(doctree.findall(bench_data)) + list(doctree.findall(bench_block)):
        node.replace_self(node.children)


class bench_details(nodes.General, nodes.Element):  # noqa: N801 - docutils naming
    """Content a reader opens on demand (HTML <details>); other builders show it in full."""


class BenchDetails(SphinxDirective):
    """``.. bench-details:: SUMMARY`` and indented content: collapsed on the web page, shown elsewhere."""

    required_arguments = 1
    final_argument_whitespace = True
    has_content = True

    def run(self) -> list[nodes.Node]:
        node = bench_details(summary=self.arguments[0])
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def visit_details_html(self: HTML5Translator, node: bench_details) -> None:
    self.body.append(f'<details class="bench-details"><summary>{escape(node["summary"])}</summary>\n')


def depart_details_html(self: HTML5Translator, node: bench_details) -> None:
    self.body.append("</details>\n")


def visit_details_other(self: nodes.NodeVisitor, node: bench_details) -> None:
    """Everywhere but HTML the content is simply shown."""


def depart_details_other(self: nodes.NodeVisitor, node: bench_details) -> None:
    pass


class bench_data(nodes.Inline, nodes.TextElement):  # noqa: N801 - docutils naming
    """A figure or a verdict with what it is (recipe, subject, cell, metric, claim, status) as data-bench-*
    attributes on the web page, for readers' scripts and the page tests; other builders show its text."""


class bench_block(nodes.General, nodes.Element):  # noqa: N801 - docutils naming
    """A table (or other block) with what it shows as data-bench-* attributes on the web page."""


def _attributes(node: nodes.Element) -> str:
    return "".join(f' data-bench-{key}="{escape(str(value))}"' for key, value in sorted(node["data"].items()))


def visit_data_html(self: HTML5Translator, node: bench_data) -> None:
    self.body.append(f"<span{_attributes(node)}>")


def depart_data_html(self: HTML5Translator, node: bench_data) -> None:
    self.body.append("</span>")


def visit_block_html(self: HTML5Translator, node: bench_block) -> None:
    self.body.append(f'<div class="bench-block"{_attributes(node)}>\n')


def depart_block_html(self: HTML5Translator, node: bench_block) -> None:
    self.body.append("</div>\n")


def data(text: str | nodes.Node, **attributes: str) -> bench_data:
    """A figure's text (or node) tagged with what it is."""
    node = bench_data(data={key.replace("_", "-"): value for key, value in attributes.items()})
    node += text if isinstance(text, nodes.Node) else nodes.Text(text)
    return node


def block(content: nodes.Node, **attributes: str) -> bench_block:
    """A block tagged with what it shows."""
    node = bench_block(data={key.replace("_", "-"): value for key, value in attributes.items()})
    node += content
    return node
