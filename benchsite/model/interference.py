"""What a run records of the machine's state before it started: the pre-run check (after pyperf's
`system show`), so a reader can tell a run made on a quiet machine from one made beside other work."""

from __future__ import annotations

from pydantic import Field

from benchsite.records import Record, Seq, Text
from benchsite.tools.base import Positive


class MachineCheck(Record):
    """The machine as the run found it: load, others' CPU time on the pinned CPUs, steal, frequency policy."""

    load_average: Seq[float] = Field(min_length=3, max_length=3)  # 1, 5 and 15 minutes
    cpus: Seq[int]  # the CPUs the run pins (empty: the whole machine)
    sample_s: Positive  # how long others' CPU time was sampled
    busy_cpus: Positive  # others' busy time on those CPUs over the sample: 0.6 is 60 % of one CPU
    steal_cpus: Positive  # CPU time the hypervisor gave to other guests, likewise
    busiest: Seq[Text]  # the processes that took most of it: "python3 (87 %)" (names only, never arguments)
    governor: Text  # the CPU frequency governor ("not exposed" in most VMs)
    boost: Text  # turbo/boost: "on", "off" or "not exposed"
    waited_s: Positive  # how long the run waited for the machine to settle
    quiet: bool  # others took at most settings.disturbed_share of a CPU when the run started

    def summary(self) -> str:
        """One line: what the check found."""
        load = ", ".join(f"{value:.2f}" for value in self.load_average)
        cpus = f"CPU {', '.join(map(str, self.cpus))}" if self.cpus else "the CPUs"
        others = f"others busy on {cpus}: {100 * self.busy_cpus:.0f} % of a CPU"
        if self.busiest:
            others += f" ({', '.join(self.busiest)})"
        steal = f"steal {100 * self.steal_cpus:.0f} %"
        frequency = f"governor {self.governor}, boost {self.boost}"
        waited = f"; waited {self.waited_s:.0f} s for it to settle" if self.waited_s >= 1 else ""
        return f"load average {load}; {others}; {steal}; {frequency}{waited}"
