"""The contributors' page documents every directive with an example, and its claim examples are valid claims."""

from __future__ import annotations

import re
import tomllib

from benchsite.results.claims import CLAIM_KINDS
from benchsite.results.published import parse_claim
from benchsite.sphinxext import DIRECTIVES
from conftest import REPO

PAGE = (REPO / "docs" / "contributing.rst").read_text()


def test_every_directive_has_a_line_and_an_example() -> None:
    for name in DIRECTIVES:
        assert f"``{name}``\n  " in PAGE, f"{name}: no entry"
        assert re.search(rf"\.\. {name}::", PAGE), f"{name}: no example"


def test_the_claim_examples_are_complete_claims_of_every_kind() -> None:
    block = re.search(r"\.\. code-block:: toml\n\n((?:   .*\n|\n)+)", PAGE)
    assert block is not None
    text = "\n".join(line[3:] for line in block.group(1).splitlines())
    claims = [parse_claim(entry, "contributing.rst") for entry in tomllib.loads(text)["claims"]]
    assert sorted(claim.kind for claim in claims) == sorted(CLAIM_KINDS)
