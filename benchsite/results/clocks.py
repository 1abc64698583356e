"""A repetition against the clocks around it: the load tool's own time, the harness's wall clock around the
tool's process (`wall_s`), and the server's CPU time over it (`server_cpu_s`).

A report can agree with itself and still not be what ran: every ab report of a run rescaled to half its time,
its derived lines recomputed, reads as a faster run. The harness's clock was not rescaled with it. On every
committed run (22,708 repetitions of ab, wrk and h2load, 2026-11-27), the harness's clock exceeded the
tool's own by 0.007 to 0.13 s, and a server pinned to one CPU never used more CPU time than that clock
(0.018 s more at most where CPU time came in 10 ms ticks). Every one of them used at most half the room the
bounds below leave.
"""

from __future__ import annotations

from typing import Any

from benchsite.model.run import RunDocument
from benchsite.tools.base import Repetition, ToolResult

# How much longer the harness's clock may run than a load tool's own: starting and ending its process.
START_AND_END_S = 0.1
START_AND_END_SHARE = 0.05  # and, over long runs, this share of the harness's clock
# How much a printed time may exceed the harness's clock: its last digit (wrk's "3.00s") and a timer's step.
PRINTED_ROOM_S = 0.011
# How much more CPU time than wall time a server pinned to one CPU may show: one tick per thread, rounded.
TICKS_ROOM_S = 0.05
SCHEDSTAT_ROOM_S = 0.002
# The harness reads the server's CPU just before the tool starts and just after it ends, outside its clock; on a
# busy machine the harness can wait for a CPU in between while the server still works (socketify beside
# tests/random_hog.py: 0.0848 s of CPU in a 0.0763 s clock, 2026-11-29): two of the scheduler's time slices.
READS_ROOM_S = 0.05


def clock_disagreement(run: RunDocument, rep: Repetition[Any], result: ToolResult) -> str | None:
    """Why this repetition's figures cannot be what the harness timed around them; None: they can be."""
    tool, measured, wall = result.tool, result.measured_s, rep.wall_s
    if measured > wall + PRINTED_ROOM_S:
        return f"{tool} says it measured {measured:g} s, longer than the {wall:g} s the harness timed around it"
    room = START_AND_END_S + START_AND_END_SHARE * wall + result.outside_measurement_s
    if tool != "client" and not rep.timed_out and wall - measured > room:  # a client starts its interpreter too
        return (
            f"{tool} says it measured {measured:g} s of the {wall:g} s the harness timed around it: "
            f"{wall - measured:.3g} s more, where starting and ending {tool} takes at most {room:.3g} s"
        )
    one_cpu = run.settings.server_cpu is not None and run.topology is None
    cpu_room = READS_ROOM_S + (TICKS_ROOM_S if rep.server_cpu_clock == "ticks" else SCHEDSTAT_ROOM_S)
    if one_cpu and rep.server_cpu_s > wall + cpu_room:
        return (
            f"the server, pinned to one CPU, used {rep.server_cpu_s:g} s of CPU time in the {wall:g} s "
            "the harness timed"
        )
    return None
