"""The PDF's document template: rinohtype's book, with running headers and footers that fit on one line,
and memory for one rendering pass at a time.

The book template heads each body page with the document's title and subtitle and foots it with the
current section's number and title: on this site both are long enough to wrap. Here a right-hand page is
headed by its page's (chapter's) title and a left-hand one by the document's title, each footed by the page
number alone: nothing stands before a tab whose stop it could overrun.

rinohtype renders the whole document again until its page references settle (twice, for this site). Each
element caches its style values per container it was placed in, which keeps every page of a pass alive
through the next one (a 1.46 GB peak for 190 pages, 0.97 GB after the first pass). Those entries are
dropped before each pass: none of them can be hit again, as a pass places everything in new containers.
"""

from __future__ import annotations

import gc
from typing import Any

from rinoh.layout import Container
from rinoh.reference import DOCUMENT_TITLE, PAGE_NUMBER, SECTION_TITLE, Field
from rinoh.style import Styled
from rinoh.template import BodyPageTemplate, TemplateConfiguration
from rinoh.templates import Book
from rinoh.text import Tab

STYLE_CACHE = "_cached_get_style"  # where rinohtype's @cached keeps Styled.get_style's values


class SiteBook(Book):
    """rinohtype's book, letting go of one rendering pass's pages before it renders the next."""

    def _render_pages(self) -> Any:
        forget_placed_pages(self)
        return super()._render_pages()


# rinohtype gives each template class its own (empty) table of templates and looks their defaults up in the
# class itself, not its bases: the book's, as they are.
SiteBook._templates = Book._templates


def forget_placed_pages(document: Book) -> None:
    """Drop what ties the document's elements to the pages of an earlier pass: the style values cached for
    the containers those pages were made of (values cached while the document was prepared are kept), and
    the ids mapped to those pages (as rinohtype itself clears them before the first pass)."""
    document.page_elements.clear()
    for found in gc.get_objects():
        if isinstance(found, Styled) and STYLE_CACHE in found.__dict__:
            cache = found.__dict__[STYLE_CACHE]
            for key in [key for key in cache if any(isinstance(part, Container) for part in key)]:
                del cache[key]


def pdf_template() -> TemplateConfiguration:
    """The book template with one-line running headers and footers."""
    template = SiteBook.Configuration("the benchmark site's PDF")
    template["contents_right_page"] = BodyPageTemplate(
        header_text=Tab() + Tab() + Field(SECTION_TITLE(1)),
        footer_text=Tab() + Tab() + Field(PAGE_NUMBER),
    )
    template["contents_left_page"] = BodyPageTemplate(
        header_text=Field(DOCUMENT_TITLE),
        footer_text=Field(PAGE_NUMBER),
    )
    return template
