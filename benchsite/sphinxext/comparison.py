"""Directives that set today's run beside the originally published figures."""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from benchsite.errors import BenchError
from benchsite.results.claims import fmt_interval
from benchsite.results.figures import FLAG_LEGEND
from benchsite.results.metrics import METRICS, fmt_latency
from benchsite.results.originals import PublishedResult
from benchsite.results.published import Published
from benchsite.results.view import RunView
from benchsite.sphinxext.base import BenchDirective, PublishedDirective
from benchsite.sphinxext.tables import fmt_ratio, table
from benchsite.tools import ab


class BenchPublished(PublishedDirective):
    """The original page's figures, parsed from its ab reports, with the source and machine."""

    def render(self) -> list[nodes.Node]:
        published = self.load_published()
        source = source_paragraph(published)
        machine = table(("Original setting", ""), [[k, v] for k, v in published.machine.items()])
        with_cpu = any(r.cpu_us_per_request is not None for r in published.results)
        rows = [_published_row(r, with_cpu) for r in published.results]
        headers = [
            "Test",
            "Subject",
            "Cell",
            "Command",
            "req/s",
            "Time/req (ms)",
            "Transfer (KB/s)",
            "Resp. p50 / p99",
            "Keep-Alive requests",
        ]
        if with_cpu:
            headers.insert(5, METRICS["load-cpu"].column)
        results = table(headers, rows)
        notes = [nodes.paragraph(text=published.notes)] if published.notes else []
        return [source, machine, results, *notes]


class BenchOriginal(PublishedDirective):
    """Where the original page can be read: its address from published.toml, and what is found there."""

    def render(self) -> list[nodes.Node]:
        return [source_paragraph(self.load_published())]


def source_paragraph(published: Published) -> nodes.paragraph:
    """ "Original page: <link> (note). Source: ..." or the source alone when no address is known."""
    para = nodes.paragraph(classes=["bench-original"])
    if published.source_url:
        para += nodes.Text("Original page: ")
        text = published.source_url_note or published.source_url
        para += nodes.reference("", text, refuri=published.source_url)
        para += nodes.Text(". ")
    else:
        para += nodes.Text("No public address of the original page is recorded. ")
    para += nodes.Text(f"Source: {published.source}.")
    return para


def _published_row(r: PublishedResult, with_cpu: bool) -> list:
    """Test, subject, cell, command, then the figures: all of ab's where its report was printed."""
    head = [
        r.test,
        r.subject,
        r.cell,
        nodes.literal(text=r.command) if r.command else "—",
        "—" if r.requests_per_s is None else f"{r.requests_per_s:,.2f}",
    ]
    if with_cpu:
        head.append("—" if r.cpu_us_per_request is None else f"{r.cpu_us_per_request:,.0f}")
    if r.result is None:
        return [*head, "—", "—", "—", "—"]
    return [
        *head,
        METRICS["time-per-request"].fmt(r.result.time_per_request_ms),
        f"{r.result.transfer_rate_kbytes_s:,.2f}",
        f"{fmt_latency(r.result.response_time_ms(50))} / {fmt_latency(r.result.response_time_ms(99))}",
        "—" if r.result.keepalive_requests is None else str(r.result.keepalive_requests),
    ]


class BenchCompare(PublishedDirective):
    """Ratios of req/s, published vs today, varying one dimension: subject, keep-alive or concurrency."""

    option_spec: ClassVar[dict] = {
        **BenchDirective.option_spec,
        "vary": lambda value: directives.choice(value, ("subject", "keepalive", "concurrency")),
        "base": directives.unchanged,
    }

    def render(self) -> list[nodes.Node]:
        view, published = self.load_view(), self.load_published()
        evidence, rests_on = self.evidence()  # the ratios the verdicts use: the reference machine's runs pooled
        vary = self.options.get("vary", "subject")
        pairs = self._pairs(view, published, vary)
        rows, any_flagged = [], False
        for label, top, bottom in pairs:
            then = _ratio(_published_rps(published, top), _published_rps(published, bottom))
            now = evidence.ratio(top, bottom, usable_only=False)
            flagged = any(f is not None and not f.usable for f in (view.figure(*top), view.figure(*bottom)))
            any_flagged = any_flagged or flagged
            mark = " ⚑" if flagged else ""
            shown = "—" if now is None else fmt_interval(now, rounds=False) + mark
            change = "—" if then is None or now is None else f"{now.value / then:.2f}×{mark}"
            rows.append([label, fmt_ratio(then), shown, change])
        notes = [nodes.paragraph(text=COMPARE_NOTE)] + ([nodes.paragraph(text=FLAG_LEGEND)] if any_flagged else [])
        headings = ("Ratio of req/s", "Published", f"Today ({rests_on}) [95 % interval]", "Today ÷ published")
        return [table(headings, rows), *notes]

    def _pairs(
        self, view: RunView, published: Published, vary: str
    ) -> list[tuple[str, tuple[str, str], tuple[str, str]]]:
        """(row label, numerator, denominator) for every pair that differs in `vary` alone (ab cells)."""
        run = view.run
        cells = [c for c in run.measured[0].cells if c.TOOL is ab.TOOL] if run.measured else []
        labels = run.subject_labels
        for result in published.results:
            labels.setdefault(result.subject, result.subject)
        pairs = []
        if vary == "subject":
            base = self.options.get("base", next(iter(labels), ""))
            if base not in labels:
                raise BenchError(
                    f"bench-compare: :base: {base!r} is not a subject of {run.run_file}: "
                    f"I know about {', '.join(labels)}"
                )
            for name, label in labels.items():
                if name != base:
                    for cell in cells:
                        pairs.append((f"{label} ÷ {labels[base]}, {cell.label}", (name, cell.name), (base, cell.name)))
        elif vary == "keepalive":
            for name, label in labels.items():
                for cell in cells:
                    if cell.keepalive and any(c.name == cell.name.removesuffix("-k") for c in cells):
                        pairs.append(
                            (
                                f"{label}: -k ÷ no -k at -c {cell.concurrency}",
                                (name, cell.name),
                                (name, cell.name.removesuffix("-k")),
                            )
                        )
        else:
            lowest = min((cell.concurrency for cell in cells), default=0)
            for name, label in labels.items():
                for cell in cells:
                    base_name = f"c{lowest}" + ("-k" if cell.keepalive else "")
                    if cell.concurrency != lowest and any(c.name == base_name for c in cells):
                        pairs.append(
                            (
                                f"{label}: {cell.label} ÷ -c {lowest}" + (" -k" if cell.keepalive else ""),
                                (name, cell.name),
                                (name, base_name),
                            )
                        )
        return pairs


COMPARE_NOTE = (
    "Today's ratios are the ones the verdicts are decided on: geometric means of the ratios measured "
    "round by round (both cells of a round run close together, so a slow phase of the machine hits "
    "both), every run of the machine pooled (random effects, so the interval carries the spread "
    "between runs), with their 95 % interval. They can differ from the ratio of two medians in the "
    "results table, which shows one run."
)


def _published_rps(published: Published, cell: tuple[str, str]) -> float | None:
    found = published.figure(*cell)
    return found.requests_per_s if found else None


def _ratio(top: float | None, bottom: float | None) -> float | None:
    return None if top is None or bottom is None or bottom == 0 else top / bottom
