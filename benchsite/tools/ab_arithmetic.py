"""How each generation of ab computes the lines it derives from its request count and its clock, so that a
report is checked the way the ab that wrote it computes.

ab 2.0.x (2.0.40-dev, 2.0.41-dev, and the Windows build quoted on the Cherokee page) prints its time as
whole seconds, a dot and the microseconds *without zero padding* ("30.27095 seconds" is 30.027095 s), and
its transfer rate from whole kilobytes: the byte total divided by 1024 and rounded down, then by the time
("2660 bytes" in 0.375607 s is 2 KB ÷ 0.375607 = 5.32 KB/s). ab 2.3 prints "%.3f" seconds and divides the
byte total by 1024 exactly. Both compute in single precision at worst, far below their printed digits.
A report without its version line (a pasted one) is read by the generation whose figures agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchsite.tools.agreement import Printed, disagreement, quotient_agrees

# Beyond the printed digits: single-precision arithmetic (a float's 24-bit mantissa), nothing more.
SINGLE_PRECISION = 1e-6


@dataclass(frozen=True)
class Generation:
    """One generation of ab's arithmetic."""

    name: str
    microsecond_clock: bool  # Time taken printed as seconds.microseconds, the microseconds unpadded
    whole_kilobytes: bool  # Transfer rate from the byte total ÷ 1024 rounded down

    def time_taken(self, text: str) -> Printed | None:
        """The time as this generation printed it; None where its format cannot have printed `text`."""
        if not self.microsecond_clock:
            return Printed.of(text)
        seconds, _, micro = text.partition(".")
        if not micro or len(micro) > 6 or seconds.startswith("-"):
            return None
        return Printed(int(seconds) + int(micro) / 1e6, 1e-6)

    def kilobytes(self, total_bytes: int) -> Printed:
        return Printed(total_bytes // 1024 if self.whole_kilobytes else total_bytes / 1024)


AB_20 = Generation("ab 2.0.x", microsecond_clock=True, whole_kilobytes=True)
AB_23 = Generation("ab 2.3", microsecond_clock=False, whole_kilobytes=False)


def generations(version: str | None, time_text: str) -> tuple[Generation, ...]:
    """The generations that may have written a report: the one its version line names, else both, the one
    whose time format fits first ("%.3f" is ab 2.3's)."""
    if version is not None and version.startswith("2.0."):
        return (AB_20,)
    if version is not None and version.startswith("2."):
        return (AB_23,)
    three_decimals = len(time_text.partition(".")[2]) == 3
    return (AB_23, AB_20) if three_decimals else (AB_20, AB_23)


def disagreements(text: dict[str, Any], generation: Generation) -> list[str]:
    """Where the report's derived lines are not what `generation` computes from its count and its time
    (Requests per second = Complete requests ÷ Time taken, and so on); none: it agrees."""
    taken = generation.time_taken(text["time_taken_s"])
    if taken is None:
        return [f"Time taken {text['time_taken_s']} is not in {generation.name}'s format"]
    done = Printed(int(text["complete_requests"]))
    if done.value <= 0:
        return []
    concurrency = int(text["concurrency"])
    checks = [
        ("Requests per second", Printed.of(text["requests_per_s"]), done, taken, "Complete requests ÷ Time taken"),
        (
            "Time per request (across all)",
            Printed.of(text["time_per_request_all_ms"]),
            taken.scaled(1000),
            done,
            "Time taken ÷ Complete requests",
        ),
        (
            "Time per request",
            Printed.of(text["time_per_request_ms"]),
            taken.scaled(1000 * concurrency),
            done,
            "Concurrency × Time taken ÷ Complete requests",
        ),
    ]
    total = int(text["total_transferred_bytes"])  # negative where an old 32-bit ab overflowed
    if total >= 0:
        how = (
            "Total transferred in whole KB ÷ Time taken"
            if generation.whole_kilobytes
            else "Total transferred in KB ÷ Time taken"
        )
        checks.append(
            ("Transfer rate", Printed.of(text["transfer_rate_kbytes_s"]), generation.kilobytes(total), taken, how)
        )
    return [
        disagreement(said=said, printed=printed, numerator=numerator, denominator=denominator, how=how)
        + f" as {generation.name} computes it"
        for said, printed, numerator, denominator, how in checks
        if not quotient_agrees(printed, numerator, denominator, SINGLE_PRECISION)
    ]


def time_taken_s(text: dict[str, Any]) -> tuple[float, list[str]]:
    """The report's time in seconds as the generation that agrees with its figures reads it, and the first
    generation's disagreements where none agrees (then the time as that generation reads it, or as printed)."""
    candidates = generations(text.get("ab_version"), text["time_taken_s"])
    first: list[str] = []
    for generation in candidates:
        found = disagreements(text, generation)
        taken = generation.time_taken(text["time_taken_s"])
        if not found and taken is not None:
            return taken.value, []
        first = first or found
    return float(text["time_taken_s"]), first
