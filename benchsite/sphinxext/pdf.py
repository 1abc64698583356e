"""The PDF (`invoke pdf`, rinohtype's builder) within a bounded memory.

rinohtype keeps a style log of every element it lays out, for its .stylelog file; each entry holds the
container the element was placed in, so every laid-out page stays alive until the document is written.
The site's PDF has hundreds of pages: with the log it took 2.9 GB. The project never reads the log, so
the PDF builder gets one that records nothing (and writes no .stylelog).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def _unlogged() -> type:
    from rinoh.style import StyleLog

    class UnloggedStyles(StyleLog):
        """A style log that keeps nothing: no laid-out container outlives its page."""

        def log_styled(self, styled: Any, container: Any, continued: Any, custom_message: Any = None) -> None:
            return None

        def write_log(self, document_source_root: Any, filename_root: Any) -> None:
            return None

    return UnloggedStyles


def without_style_log(app: Sphinx) -> None:
    """For rinohtype's builder only: lay out the pages without keeping a style log."""
    if app.builder.name != "rinoh":
        return
    import rinoh.document

    rinoh.document.StyleLog = _unlogged()  # the name rinohtype's Document renders with
