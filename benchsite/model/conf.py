"""conf/<recipe>.toml: how hard and where a recipe runs (profiles, CPU pinning, timeouts, tool paths).

Read through a strict schema like the recipe itself: every setting has a default, every profile
names its own load; an unknown key or a value out of range is a one-line error.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from benchsite.model.counting import CountPlan, FlamePlan
from benchsite.model.latency import LatencyPlan, plan_from
from benchsite.records import Name, Port, Record, Seq, Text
from benchsite.tools import TOOLS, AnyCell
from benchsite.tools.base import BusyClock, LoadTool

# Below this much of others' CPU time, /proc/stat's 10 ms ticks on two CPUs (read before and after a
# repetition) are all an interference counted in ticks measures.
TICKS_FLOOR_S = 0.1

# A release as PyPI numbers it: 3.2.4, 17.2.0.post0, 1.0rc1.
Release = Annotated[str, StringConstraints(pattern=r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?$", max_length=32)]


class Profile(Record):
    """How much load: requests per repetition, rounds, warm-up; optionally a subset of subjects and cells."""

    name: Name
    requests: int = Field(ge=1, le=10_000_000)
    rounds: int = Field(ge=1, le=1000)  # every cell's repetitions, one per round, before any further round
    # Each server started this many times, the rounds split between the starts in blocks (1: one start for the
    # whole run). With several, every start has a hash seed of its own, shared by the subjects it starts, so an
    # A/B run's interval covers what a start adds (seed, memory layout) instead of taking it for the change.
    starts: int = Field(ge=1, le=50)
    warmup_requests: int = Field(ge=0, le=10_000_000)
    subjects: Seq[Name]  # empty: every subject
    cells: Seq[Name]  # empty: every cell
    warmup_cells: Seq[Name]  # empty: warm up with every ab cell
    wrk_duration_s: int = Field(ge=0, le=3600)  # 0: each wrk cell's own duration
    cell_requests: dict[str, Annotated[int, Field(ge=1, le=10_000_000)]]  # cells that run another count
    # After `rounds` rounds of every cell, further rounds of the cells whose claims are still
    # inconclusive, up to max_rounds in all (0: none) and while the whole run stays within time_budget_s.
    max_rounds: int = Field(ge=0, le=1000)
    time_budget_s: float = Field(ge=0, le=86400)
    # Further rounds also go to claims whose ratio interval is wider than ± this share of the estimate
    # (0.05: ±5 %), within the same limits (0: deciding is enough).
    target_half_width: float = Field(ge=0, le=1)
    # Each ab repetition and warm-up also ends after this many seconds (ab -t, with -n as its ceiling), so that a
    # side answering at 10 req/s costs seconds, not minutes; the figure records how many requests were made (0: the
    # request count alone bounds it).
    seconds: float = Field(ge=0, le=3600)
    # A sequential A/B run or sweep: every comparison of copies is looked at after every round, with intervals
    # valid at every look (`results.sequential`); a cell is no longer measured once its comparisons are decided,
    # and the rounds stop when every one is, or at max_rounds or the time budget. With several starts the rounds
    # keep starting the servers anew every `rounds ÷ starts` rounds, to the end.
    sequential: bool
    # The smallest change that matters (0.02: ±2 %): a comparison whose interval lies wholly within it is decided
    # as "no change that matters" (0: only a change decides).
    smallest_change: float = Field(ge=0, le=1)
    # A release sweep: every subject the conf's [sweeps.PACKAGE] names runs once per release of PACKAGE (sweep).
    releases: Seq[Release]
    sweep: str | None  # the package the releases are of (None: no releases)
    # Instructions per request, counted under Valgrind after the timed rounds (None: not counted).
    counting: CountPlan | None
    # The open-loop latency profile after the timed rounds (None: none).
    latency: LatencyPlan | None

    @model_validator(mode="after")
    def _bounded_rounds(self) -> Profile:
        if self.max_rounds and self.max_rounds < self.rounds:
            raise ValueError(
                f"profiles.{self.name}.max_rounds ({self.max_rounds}) is below rounds "
                f"({self.rounds}): raise it, or 0 for no further rounds"
            )
        if self.starts > self.rounds:
            raise ValueError(
                f"profiles.{self.name}.starts ({self.starts}) is above rounds ({self.rounds}): lower starts"
            )
        if self.max_rounds and not self.time_budget_s:
            raise ValueError(f"profiles.{self.name}: further rounds (max_rounds) need a time_budget_s")
        if self.seconds != int(self.seconds):  # ab -t reads a whole number: 0.5 would be no bound, 1.5 one second
            raise ValueError(
                f"profiles.{self.name}.seconds ({self.seconds:g}): ab bounds a repetition in whole seconds: give 0 "
                "(no bound) or a whole number from 1"
            )
        if self.sequential:
            self._sequential_fits()
        return self

    def _sequential_fits(self) -> None:
        if not self.max_rounds:
            raise ValueError(f"profiles.{self.name}: a sequential profile needs max_rounds, the most it may make")
        if self.rounds % self.starts:
            raise ValueError(
                f"profiles.{self.name}: a sequential profile starts its servers every rounds ÷ starts rounds: "
                f"make rounds ({self.rounds}) a multiple of starts ({self.starts})"
            )

    @property
    def further_rounds_by(self) -> Literal["", "claims", "comparisons"]:
        """What steers the rounds after the profile's own: nothing (no max_rounds), the original page's claims still
        undecided, or (a sequential profile, which always has max_rounds) the comparisons of copies still undecided.
        The one place the profile's `sequential` is read: the run's rounds and its comparison design ask this."""
        if not self.max_rounds:
            return ""
        return "comparisons" if self.sequential else "claims"

    @property
    def _starts_to_the_end(self) -> bool:
        """Whether the servers keep starting anew in blocks of rounds ÷ starts to the last further round (a
        sequential profile's further rounds), rather than the further rounds staying with the last start."""
        return self.further_rounds_by == "comparisons" and self.starts > 1

    def requests_for(self, cell: AnyCell) -> int:
        return self.cell_requests.get(cell.name, self.requests)

    def start_of(self, round_index: int) -> int:
        """The start (1, 2...) whose servers measure a round: the rounds in equal blocks, the further rounds in
        the last start (a sequential profile: in further blocks of the same length)."""
        if self._starts_to_the_end:
            return (round_index - 1) // (self.rounds // self.starts) + 1
        return min(self.starts, (round_index - 1) * self.starts // self.rounds + 1)

    def first_rounds(self) -> list[int]:
        """The round each start begins with (a sequential profile: up to max_rounds)."""
        last = self.max_rounds if self._starts_to_the_end else self.rounds
        return [index for index in range(1, last + 1) if self.start_of(index) != self.start_of(index - 1)]


PROFILE_DEFAULTS: dict[str, Any] = {
    "warmup_requests": 0,
    "subjects": [],
    "cells": [],
    "warmup_cells": [],
    "wrk_duration_s": 0,
    "sweep": None,
    "cell_requests": {},
    "max_rounds": 0,
    "time_budget_s": 0,
    "target_half_width": 0,
    "seconds": 0,
    "sequential": False,
    "smallest_change": 0,
    "releases": [],
    "counting": None,
    "latency": None,
    "starts": 1,
}

COUNTING_DEFAULTS: dict[str, Any] = {"concurrency": None, "starts": 1}


class Settings(Record):
    """Machine-level knobs from conf/<recipe>.toml [settings]."""

    server_cpu: Annotated[int, Field(ge=0, le=4095)] | None
    load_cpu: Annotated[int, Field(ge=0, le=4095)] | None
    port: Port  # 0: a free port per subject; N: ports N, N+1, ...
    socket_timeout_s: int = Field(ge=1, le=3600)
    cell_timeout_s: float = Field(gt=0, le=86400)
    start_timeout_s: float = Field(gt=0, le=3600)
    tool_paths: dict[str, Text]  # a load tool's program where it is not the tool's own name on PATH
    # The order within a round: "cell" (every subject of a cell back to back, the order turning round
    # every other round) or "subject" (every cell of a subject back to back, as the first runs did).
    interleave: Literal["cell", "subject"]
    # Interference: a repetition is disturbed when the CPU time others took on the pinned CPUs (their busy
    # time not spent by the run's own processes, plus steal) exceeds disturbed_share of its wall time and
    # disturbed_floor_s, or TICKS_FLOOR_S where any of it came in clock ticks. The share's default marks 0.75 %
    # of the committed calibration runs' repetitions (tick-counted) on a quiet machine; counted in nanoseconds,
    # others take 5 to 20 ms of a quiet 0.2 s repetition (the harness, the kernel's threads), below the floor.
    disturbed_share: float = Field(gt=0, le=2)
    disturbed_floor_s: float = Field(ge=0, le=60)
    # A run with more than this share of its repetitions disturbed was measured on a busy machine: labelled
    # wherever shown, its undisturbed repetitions pooled as any run's, a quiet run preferred as a page's main run.
    busy_share: float = Field(gt=0, le=1)
    # Before a run: how long to wait for a busy machine to settle (0: do not wait).
    settle_wait_s: float = Field(ge=0, le=3600)

    def disturbed(self, interference_s: float | None, wall_s: float, clock: BusyClock | None) -> bool:
        """Whether a repetition with this much of others' CPU time on its CPUs, counted by `clock`, was disturbed."""
        if interference_s is None:
            return False  # not recorded: nothing to say it was
        floor = self.disturbed_floor_s if clock == "cpuacct" else max(self.disturbed_floor_s, TICKS_FLOOR_S)
        return interference_s > floor and interference_s > self.disturbed_share * wall_s

    @model_validator(mode="after")
    def _known_tools(self) -> Settings:
        programs = [name for name, tool in TOOLS.items() if tool.program]
        unknown = sorted(set(self.tool_paths) - set(programs))
        if unknown:
            raise ValueError(f"tool_paths: {', '.join(unknown)} unknown: I know about {', '.join(programs)}")
        return self

    def program(self, tool: LoadTool) -> str:
        """The program that runs a load tool here."""
        return self.tool_paths.get(tool.name, tool.program or tool.name)


SETTINGS_DEFAULTS: dict[str, Any] = {
    "server_cpu": 0,
    "load_cpu": 1,
    "port": 0,
    "socket_timeout_s": 30,
    "cell_timeout_s": 300.0,
    "start_timeout_s": 20.0,
    "tool_paths": {},
    "interleave": "cell",
    "disturbed_share": 0.25,
    "disturbed_floor_s": 0.02,
    "busy_share": 0.25,
    "settle_wait_s": 30.0,
}


class Sweep(Record):
    """[sweeps.PACKAGE]: the subjects that run a package whose releases a sweep profile measures."""

    package: Text
    subjects: Seq[Name] = Field(min_length=1)
    # The smallest patch that makes a release run on today's Python: release -> file under conf/.
    patches: dict[Release, Text] = Field(default_factory=dict)
    # How a copy is labelled: {label} (the subject's), {package}, {release}; default "{label}, {package} {release}".
    labels: dict[Name, Text] = Field(default_factory=dict)


class ConfFile(Record):
    """conf/<name>.toml: [settings] (each with a default) and at least one [profiles.NAME]."""

    settings: Settings
    profiles: dict[str, Profile] = Field(min_length=1)
    sweeps: dict[str, Sweep] = Field(default_factory=dict)  # by package
    flame: FlamePlan | None = None
    # Wall-clock profiles: py-spy with idle threads, where a server is slower in time than in work.
    wallclock: FlamePlan | None = None

    @model_validator(mode="after")
    def _sweep_named(self) -> ConfFile:
        for profile in self.profiles.values():
            if profile.releases and profile.sweep not in self.sweeps:
                raise ValueError(
                    f'profiles.{profile.name}.releases needs sweep = "PACKAGE" and a [sweeps.PACKAGE] table naming '
                    "the subjects that run it"
                )
        return self

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        settings = data.get("settings", {})
        if isinstance(settings, dict):
            data["settings"] = {**SETTINGS_DEFAULTS, **settings}
        sweeps = data.get("sweeps")
        if isinstance(sweeps, dict):
            data["sweeps"] = {
                package: {"package": package, **table} if isinstance(table, dict) else table
                for package, table in sweeps.items()
            }
        only = list(sweeps) if isinstance(sweeps, dict) and len(sweeps) == 1 else [None]
        profiles = data.get("profiles")
        if isinstance(profiles, dict):
            data["profiles"] = {
                name: _profile_filled(name, table, only[0]) if isinstance(table, dict) else table
                for name, table in profiles.items()
            }
        return data


def _profile_filled(name: str, table: dict[str, Any], only_sweep: str | None) -> dict[str, Any]:
    """A profile's table with the defaults of what it leaves out, its counting plan's too; releases are of the
    conf's one sweep unless it names another."""
    filled = {**PROFILE_DEFAULTS, **table, "name": name}
    if filled.get("releases") and filled["sweep"] is None:
        filled["sweep"] = only_sweep
    if isinstance(filled["counting"], dict):
        filled["counting"] = {**COUNTING_DEFAULTS, **filled["counting"]}
    filled["latency"] = plan_from(filled["latency"])
    return filled
