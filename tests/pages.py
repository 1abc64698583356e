"""Reading built pages by what their figures are, not by where they sit: the data-bench-* attributes."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Tagged:
    """One element carrying data-bench-* attributes, and the text inside it."""

    tag: str
    data: dict[str, str]
    text: str = ""
    children: list[Tagged] = field(default_factory=list)

    def find(self, **wanted: str) -> list[Tagged]:
        """The tagged elements inside this one whose attributes include all of `wanted`."""
        return _matching(self.children, wanted)

    def one(self, **wanted: str) -> Tagged:
        """The one tagged element inside this one with these attributes."""
        return _only(self.find(**wanted), wanted)


def _matching(elements: list[Tagged], wanted: dict[str, str]) -> list[Tagged]:
    wanted = {key.replace("_", "-"): value for key, value in wanted.items()}
    return [e for e in elements if all(e.data.get(k) == v for k, v in wanted.items())]


def _only(found: list[Tagged], wanted: dict[str, str]) -> Tagged:
    assert len(found) == 1, f"{len(found)} elements with {wanted}"
    return found[0]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[Tagged] = []
        self.open: list[tuple[str, Tagged | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        data = {k.removeprefix("data-bench-"): v or "" for k, v in attrs if k.startswith("data-bench-")}
        if tag in ("br", "img", "input", "meta", "link", "hr", "col", "source", "wbr"):
            return
        element = Tagged(tag, data) if data else None
        if element is not None:
            for _, outer in self.open:
                if outer is not None:
                    outer.children.append(element)
            self.found.append(element)
        self.open.append((tag, element))

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            name, _ = self.open.pop()
            if name == tag:
                break

    def handle_data(self, text: str) -> None:
        for _, element in self.open:
            if element is not None:
                element.text += text


def tagged(html: str) -> list[Tagged]:
    """Every element of a page with data-bench-* attributes, in page order, with its text (spaces squeezed)."""
    reader = _Reader()
    reader.feed(html)
    for element in reader.found:
        element.text = " ".join(element.text.split())
    return reader.found


def find(html: str, **wanted: str) -> list[Tagged]:
    """The elements whose data-bench-* attributes include all of `wanted` (underscores read as dashes)."""
    return _matching(tagged(html), wanted)


def one(html: str, **wanted: str) -> Tagged:
    """The one element with these attributes (an assertion error if none or several)."""
    return _only(find(html, **wanted), wanted)
