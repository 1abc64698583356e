"""`invoke pdf`: the whole site as one PDF (rinohtype's Sphinx builder), with what it took to make it."""

from __future__ import annotations

import contextlib
import resource
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from benchsite.errors import BenchError

PDF_FILE = "benchmarks.pdf"  # the target docs/conf.py names
LOG_FILE = "pdf.log"
# rinohtype's word for a word wider than its line: it is printed past the margin, cut at the paper's edge
OVERFLOW = "item too long to fit on line"


@dataclass(frozen=True)
class PdfBuilt:
    """A PDF built: where, how many pages, in how long, at what peak memory of the build."""

    path: Path
    pages: int
    seconds: float
    peak_gb: float


def build_pdf(docs_dir: Path, target: Path) -> PdfBuilt:
    """Build the PDF into `target` (rinohtype's progress goes to pdf.log there); a failure is one line."""
    from rinoh.warnings import RinohWarning
    from sphinx.cmd.build import build_main

    target.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with (
        (target / LOG_FILE).open("w") as log,
        contextlib.redirect_stdout(log),
        warnings.catch_warnings(record=True) as said,
    ):
        warnings.simplefilter("always", RinohWarning)
        # -W -n --keep-going: the warnings `invoke docs` fails on fail the PDF too, every one of them said
        argv = ["-W", "-n", "--keep-going", "-q", "-t", "pdf", "-b", "rinoh", str(docs_dir), str(target)]
        failed = build_main(argv) != 0
        rinoh_said = list(dict.fromkeys(str(w.message) for w in said if issubclass(w.category, RinohWarning)))
        print("\n".join(rinoh_said))
    if failed:
        raise BenchError(f"the PDF build failed: fix the warnings above (rinohtype's progress: {target / LOG_FILE})")
    overflowing = [message for message in rinoh_said if OVERFLOW in message]
    if overflowing:
        raise BenchError(
            f"the PDF prints {len(overflowing)} word(s) past the margin ({'; '.join(overflowing)}): "
            "break that line in its source"
        )
    seconds = time.monotonic() - started
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux counts it in KiB
    return PdfBuilt(target / PDF_FILE, page_count(target / PDF_FILE), seconds, peak_gb)


def page_count(pdf: Path) -> int:
    """How many pages a PDF has (read by rinohtype's own PDF reader)."""
    from rinoh.backend.pdf.reader import PDFReader

    return int(PDFReader(str(pdf)).catalog["Pages"]["Count"])
