"""Load tools: build a bounded command line, parse what the tool printed into a result record.

This layer knows nothing of recipes, runs or pages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from pydantic import Field

from benchsite.tools.ab import AbResult, parse_ab_output
from benchsite.tools.client import ClientResult, parse_client_output
from benchsite.tools.wrk import WrkResult, parse_wrk_output

# Any tool's result, told apart by its "tool" tag.
LoadResult = Annotated[AbResult | WrkResult | ClientResult, Field(discriminator="tool")]

PARSERS: dict[str, Callable[[str], AbResult | WrkResult | ClientResult]] = {
    "ab": parse_ab_output,
    "wrk": parse_wrk_output,
    "client": parse_client_output,
}
VERSION_FLAGS = {"ab": "-V", "wrk": "--version"}
EXTERNAL_TOOLS = ("ab", "wrk")  # a "client" load runs the subject itself


def parse_report(tool: str, report: str) -> AbResult | WrkResult | ClientResult:
    """Parse a tool's report (raises the tool's parse error, a BenchError)."""
    return PARSERS[tool](report)
