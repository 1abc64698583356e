"""Load tools: each one module (its cell, argv, parsed report and stored cell run) and one registry entry.

This layer knows nothing of recipes, runs or pages. To add a tool, write `tools/<tool>.py` after
the pattern of `h2load.py` and add it to each line of the registry below; `match` statements over
cells elsewhere end in `assert_never`, so the type check names any place that must learn of it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from benchsite.errors import BenchError
from benchsite.tools import ab, client, h2load, paced, wrk
from benchsite.tools.base import ExternalCell, LoadTool

# The registry: one entry per tool on each line.
TOOLS: dict[str, LoadTool] = {tool.name: tool for tool in (ab.TOOL, wrk.TOOL, h2load.TOOL, paced.TOOL, client.TOOL)}
AnyCell = ab.AbCell | wrk.WrkCell | h2load.H2loadCell | paced.PacedCell | client.ClientCell
AnyCellRun = ab.AbCellRun | wrk.WrkCellRun | h2load.H2loadCellRun | paced.PacedCellRun | client.ClientCellRun
AnyResult = ab.AbResult | wrk.WrkResult | h2load.H2loadResult | paced.PacedResult | client.ClientResult

# A cell as a recipe declares it, and a cell run as a run stores it, told apart by their `tool` key.
Cell = Annotated[AnyCell, Field(discriminator="tool")]
CellRun = Annotated[AnyCellRun, Field(discriminator="tool")]


def load_tool(name: str) -> LoadTool:
    """A registered tool by name; an unknown one is a one-line error listing the known ones."""
    try:
        return TOOLS[name]
    except KeyError:
        raise BenchError(f"unknown load tool {name!r}: I know about {', '.join(TOOLS)}") from None


def parse_report(tool: str, report: str) -> AnyResult:
    """Parse a tool's report (raises the tool's parse error, a BenchError)."""
    result = load_tool(tool).parse(report)
    assert isinstance(result, AnyResult)
    return result


def external_load(cell: AnyCell) -> ExternalCell | None:
    """The cell as one whose load a program of its own makes against a server (ab, wrk, h2load, the paced
    tool), or None: a client under test's cell, whose load is the client itself."""
    return cell if isinstance(cell, ExternalCell) else None


def client_load(cell: AnyCell) -> client.ClientCell | None:
    """The cell as a client under test's (the URL it requests), or None: a load tool's cell."""
    return cell if isinstance(cell, client.ClientCell) else None
