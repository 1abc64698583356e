"""The PDF's page template: rinohtype's book, with running headers and footers that fit on one line.

The book template heads each body page with the document's title and subtitle and foots it with the
current section's number and title: on this site both are long enough to wrap. Here a right-hand page is
headed by its page's (chapter's) title and a left-hand one by the document's title, each footed by the page
number alone: nothing stands before a tab whose stop it could overrun.
"""

from __future__ import annotations

from rinoh.reference import DOCUMENT_TITLE, PAGE_NUMBER, SECTION_TITLE, Field
from rinoh.template import BodyPageTemplate, TemplateConfiguration
from rinoh.templates import Book
from rinoh.text import Tab


def pdf_template() -> TemplateConfiguration:
    """The book template with one-line running headers and footers."""
    template = Book.Configuration("the benchmark site's PDF")
    template["contents_right_page"] = BodyPageTemplate(
        header_text=Tab() + Tab() + Field(SECTION_TITLE(1)),
        footer_text=Tab() + Tab() + Field(PAGE_NUMBER),
    )
    template["contents_left_page"] = BodyPageTemplate(
        header_text=Field(DOCUMENT_TITLE),
        footer_text=Field(PAGE_NUMBER),
    )
    return template
