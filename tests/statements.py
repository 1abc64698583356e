"""Re-deriving what a page says from what it says it of: each check takes a statement's words and the evidence, read
straight from published.toml, run.json and the tools' raw output (not through the code that wrote the page), and
returns what is wrong with the statement ([] where nothing).

The rules restated here are the methodology's, in a few lines each: a badge from an interval and a claim's bounds,
the badge over machines, the kind of client a cell measured, a one-sided change against its rounds.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean, median

# Badges from the one that grants a claim most to the one that grants it least; a machine that measured nothing
# (or too little) has no place in the order.
GRANTING = (
    "beyond the claim",
    "as claimed",
    "at least as claimed",
    "direction as claimed",
    "not settled",
    "weaker than claimed",
    "short of the claim",
    "not as claimed",
    "the opposite",
)
NOTHING = ("not measured", "not enough evidence", "the load tool's limit")


@dataclass(frozen=True)
class Estimate:
    """ "1.46 [1.32–1.61] (2 runs, 10 rounds)" read back."""

    value: float
    low: float
    high: float
    rounds: int


ESTIMATE = re.compile(r"^([\d.]+) \[([\d.]+)–([\d.]+)\] \((?:\d+ runs, )?(\d+) rounds?\)$")


def estimate_of(text: str) -> Estimate | None:
    found = ESTIMATE.match(text)
    if found is None:
        return None
    value, low, high, rounds = found.groups()
    return Estimate(float(value), float(low), float(high), int(rounds))


def claims_of(data: Path, recipe: str) -> dict[str, dict]:
    """A recipe's claims as its published.toml states them, by id."""
    with (data / recipe / "published.toml").open("rb") as file:
        return {claim["id"]: claim for claim in tomllib.load(file).get("claims", [])}


def ratio_badge(estimate: Estimate, at_least: float | None, at_most: float | None) -> str:
    """The badge an interval earns against a ratio claim's bounds (the methodology's words)."""
    low, high = estimate.low, estimate.high
    if (at_least is None or at_least < 1) and (at_most is None or at_most > 1):  # no direction claimed
        if (at_least is None or low >= at_least) and (at_most is None or high <= at_most):
            return "as claimed"
        outside = (at_least is not None and high < at_least) or (at_most is not None and low > at_most)
        return "not as claimed" if outside else "not settled"
    if at_least is None or at_least < 1:  # a claimed slowdown: mirrored into a speed-up
        low, high = 1 / high, 1 / low
        at_least, at_most = (1 / at_most if at_most else None), (1 / at_least if at_least else None)
    if high < 1:
        return "the opposite"
    short = at_least is not None and high < at_least
    if low <= 1:
        return "short of the claim" if short else "not settled"
    if short:
        return "weaker than claimed"
    if at_most is not None and low > at_most:
        return "beyond the claim"
    reaches = at_least is None or low >= at_least
    if reaches and (at_most is None or high <= at_most):
        return "as claimed"
    return "at least as claimed" if reaches else "direction as claimed"


def ratio_state(estimate: Estimate, at_least: float | None, at_most: float | None) -> str:
    """holds, fails or open: where the whole interval lies against the bounds."""
    if (at_least is not None and estimate.high < at_least) or (at_most is not None and estimate.low > at_most):
        return "fails"
    if (at_least is None or estimate.low >= at_least) and (at_most is None or estimate.high <= at_most):
        return "holds"
    return "open"


def machine_badge_problems(claim: dict, badge: str, shown: str) -> list[str]:
    """A machine's badge on a ratio claim against its shown estimate."""
    estimate = estimate_of(shown)
    if claim.get("kind") != "ratio" or estimate is None:
        return []
    if estimate.rounds < 3:
        return [] if badge == "not enough evidence" else [f"{badge!r} from {estimate.rounds} rounds"]
    wanted = ratio_badge(estimate, claim.get("at_least"), claim.get("at_most"))
    return [] if badge == wanted else [f"{shown} against {claim.get('at_least')}-{claim.get('at_most')}: {wanted!r}"]


def card_badge_problems(badge: str, machines: list[tuple[str, str | None]], claim: dict) -> list[str]:
    """The card's badge against its machines' (badge, shown estimate): the one that grants the claim least, or
    "depends on the machine" where a ratio claim holds on one machine and fails on another."""
    counted = [(each, shown) for each, shown in machines if each not in NOTHING]
    if not counted:
        return [] if badge in NOTHING else [f"{badge!r} where no machine measured it"]
    states = set()
    for _, shown in counted:
        estimate = estimate_of(shown or "")
        if claim.get("kind") == "ratio" and estimate is not None:
            states.add(ratio_state(estimate, claim.get("at_least"), claim.get("at_most")))
    if {"holds", "fails"} <= states:
        return [] if badge == "depends on the machine" else [f"{badge!r} where one machine holds and one fails"]
    weakest = max((each for each, _ in counted), key=GRANTING.index)
    return [] if badge == weakest else [f"{badge!r} where the machines say {[each for each, _ in counted]}"]


def tally_problems(tally: str, badges: list[str]) -> list[str]:
    """A home page count ("2 of 4 as claimed, 1 weaker than claimed, …") against the card's badges."""
    said = dict(
        (words, int(number)) for number, words in re.findall(r"(\d+) (?:of \d+ )?([a-z' ]+?)(?:,|$)", tally) if words
    )
    counted = {each: badges.count(each) for each in set(badges)}
    return [] if said == counted else [f"{tally!r} where the card says {counted}"]


def cell_record(run: dict, cell: str) -> dict:
    return next(found for subject in run["subjects"] for found in subject["cells"] if found["name"] == cell)


def raw_outputs(run_dir: Path, run: dict, cell: str) -> list[str]:
    """Every raw output of a cell, as the tool wrote it."""
    texts = []
    for subject in run["subjects"]:
        for found in subject["cells"]:
            if found["name"] == cell:
                paths = found["repetitions"]["columns"]["raw_output"]
                texts += [(run_dir / path).read_text(errors="replace") for path in paths if path]
    return texts


def pick_problems(sentence: str, run_dir: Path, cell: str, ranking: str = "") -> list[str]:
    """A pick against its cell: the clients, connections and protocol it names; a p99 only beside the kind of
    client the open-loop load measured; where the first two of the cell's ranking are both at the load tool's limit
    (req/s cannot tell them apart), no pick by req/s."""
    run = json.loads((run_dir / "run.json").read_text())
    record = cell_record(run, cell)
    problems = []
    count = record.get("concurrency") or record.get("connections") or record.get("clients")
    clients = "one client at a time" if count == 1 else f"{count:,} clients at once"
    if not sentence.startswith(f"For {clients}"):
        problems.append(f"{cell} measured {clients}")
    kept = bool(record.get("keepalive")) or record["tool"] in ("wrk", "h2load")
    if ("each keeping its connection open" in sentence) != kept or ("a new connection per request" in sentence) == kept:
        problems.append(f"{cell} {'kept connections open' if kept else 'opened a new connection per request'}")
    if "HTTP/2" in sentence:
        texts = raw_outputs(run_dir, run, cell)
        protocols = {found for text in texts for found in re.findall(r"Application protocol: (\S+)", text)}
        if protocols != {"h2"}:
            problems.append(f"says HTTP/2 where the raw output says {sorted(protocols) or 'no protocol'}")
    plan = (run.get("latency") or {}).get("plan") or {}
    if "p99" in sentence and (plan.get("capacity_cell") != cell or bool(plan.get("keepalive")) != kept):
        problems.append(f"a p99 beside {cell}: the open-loop load measured {plan.get('capacity_cell')}")
    leaders = re.split(r" > | ≈ |; ", ranking)[:2]
    both_limited = len(leaders) == 2 and all("(load tool's limit)" in each for each in leaders)
    if (both_limited or not ranking) and "at least" in sentence and "CPU a request decides" not in sentence:
        problems.append("picked by req/s among figures at the load tool's limit (CPU a request decides)")
    return problems


RPS = re.compile(r"^Requests per second:\s+([\d.]+)", re.M)


def round_slowdowns(run_dir: Path, a: str, b: str, cell: str) -> list[float]:
    """A ÷ B of req/s in each round both sides' ab reports, read from the raw files."""
    slowdowns = []
    for path_a in sorted((run_dir / "raw" / a / cell).glob("rep-*[0-9].txt")):
        path_b = run_dir / "raw" / b / cell / path_a.name
        found_a = RPS.search(path_a.read_text(errors="replace"))
        found_b = RPS.search(path_b.read_text(errors="replace")) if path_b.exists() else None
        if found_a and found_b and float(found_b.group(1)) > 0:
            slowdowns.append(float(found_a.group(1)) / float(found_b.group(1)))
    return slowdowns


FACTOR = re.compile(r"^([\d.,]+)× slower or more in each of its \d+ (?:rounds|starts)")


def bound_problems(said: str, slowdowns: list[float]) -> list[str]:
    """A one-sided slowdown said at the strongest its rounds support: within 2× of the smallest round's."""
    found = FACTOR.match(said)
    if not slowdowns:
        return []
    if found is None:
        return [f"{said[:60]!r}: not said against its rounds (smallest slowdown {min(slowdowns):.1f}×)"]
    factor = float(found.group(1).replace(",", ""))
    if not min(slowdowns) / 2 <= factor <= max(slowdowns):
        return [f"{factor}× where its rounds were {min(slowdowns):.1f}× to {max(slowdowns):.1f}× slower"]
    return []


CAUSES = ("ran faster that day", "ran slower that day", "because")


def drift_problems(
    said: str, medians: dict[tuple[str, str], list[float]], labels: dict[str, str], cells: dict[str, str]
) -> list[str]:
    """A drift note names no cause and quotes one cell's figures: its range over the machine's runs."""
    problems = [f"asserts a cause: {cause!r}" for cause in CAUSES if cause in said]
    found = re.search(r"\(([^()]+(?:\([^()]*\))?[^()]*) at ([^:]+): ([\d,]+) (?:req/s here, |to )([\d,]+)", said)
    if found is None:
        return [*problems, "quotes no figure of what the machine gives"]
    label, cell_label = found.group(1), found.group(2)
    subject = next((name for name, shown in labels.items() if shown == label), None)
    cell = next((name for name, shown in cells.items() if shown == cell_label), None)
    values = medians.get((subject or "", cell or ""), [])
    quoted = [float(found.group(3).replace(",", "")), float(found.group(4).replace(",", ""))]
    if not values or any(not min(values) - 0.5 <= value <= max(values) + 0.5 for value in quoted):
        problems.append(f"{quoted} outside the machine's medians of {label} at {cell_label}: {values}")
    return problems


def newest_run_of(data: Path, recipe: str) -> str:
    """The newest full run of a recipe, by its directory's name."""
    return max(path.name for path in (data / recipe).iterdir() if path.name.endswith("-full"))


def median_rps(run_dir: Path, subject: str, cell: str) -> float | None:
    """The median of a cell's repetitions' req/s, read from the raw ab/wrk/h2load reports."""
    values = []
    for path in (run_dir / "raw" / subject / cell).glob("rep-*[0-9].txt"):
        text = path.read_text(errors="replace")
        found = RPS.search(text) or re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
        if found:
            values.append(float(found.group(1)))
    return median(values) if values else None


TOOL_P99 = re.compile(r"^percentile us: 99 (\d+)$", re.M)  # the tool's own line (the witness's is prefixed)
BESIDE = re.compile(r"ran from ([\d.,]+) (µs|ms|s) \((.+?)\) to ([\d.,]+) (µs|ms|s) \((.+?)\)(?:,|;|$)")
UNITS_US = {"µs": 1.0, "ms": 1000.0, "s": 1_000_000.0}


def half_load_p99_us(run_dir: Path, subject: str) -> float | None:
    """The median over its repetitions of a server's p99 at half its capacity, read from the sender's raw reports."""
    values = [
        float(found.group(1))
        for path in sorted((run_dir / "raw" / subject / "paced-50").glob("rep-*[0-9].txt"))
        if (found := TOOL_P99.search(path.read_text(errors="replace")))
    ]
    return median(values) if values else None


def beside_problems(said: str, run_dir: Path) -> list[str]:
    """The card's "p99 latency ran from X (A) to Y (B)": each end is that server's median p99 at half load in the
    raw reports, to the figure's last digit."""
    found = BESIDE.search(said)
    if found is None:
        return [] if "p99" not in said else [f"{said[:80]!r}: no range of p99 to check"]
    run = json.loads((run_dir / "run.json").read_text())
    by_label = {subject["label"]: subject["name"] for subject in run["subjects"]}
    problems = []
    for value, unit, label in (found.group(1, 2, 3), found.group(4, 5, 6)):
        subject = by_label.get(label)
        raw = half_load_p99_us(run_dir, subject) if subject else None
        shown = float(value.replace(",", "")) * UNITS_US[unit]
        step = UNITS_US[unit] * (0.01 if "." in value else 1.0)  # the shown figure's last digit
        if raw is None or abs(raw - shown) > step:
            problems.append(f"{label}: p99 {value} {unit} where its raw reports give {raw} µs")
    return problems


STALL = re.compile(r"; (\S+) is ([\d,.]+)× slower than (\S+) at (.+?) \(")


def stall_problems(story: str, run_dir: Path) -> list[str]:
    """A sweep story's "8.1.0 is 782× slower than 8.0.0 at -c 1 -k": the geometric mean of the per-round ratios
    of the two releases' req/s in the raw ab reports, to the figure's last digit."""
    run = json.loads((run_dir / "run.json").read_text())
    cells = {cell["label"]: cell["name"] for subject in run["subjects"] for cell in subject["cells"]}
    copies = {variant["name"].replace("_", "."): variant["copies"] for variant in run["variants"]["variants"]}
    problems = []
    for release, size, before, cell_label in STALL.findall(story):
        cell = cells[cell_label]
        slow, fast = copies[release], copies[before]
        ratios = []
        for subject in slow:
            for path in sorted((run_dir / "raw" / fast[subject] / cell).glob("rep-*[0-9].txt")):
                other = run_dir / "raw" / slow[subject] / cell / path.name
                top, bottom = RPS.search(path.read_text()), RPS.search(other.read_text()) if other.exists() else None
                if top and bottom:
                    ratios.append(float(top.group(1)) / float(bottom.group(1)))
        if not ratios:
            problems.append(f"{release} against {before}: no paired rounds in the raw reports")
            continue
        mean = math.exp(fmean(math.log(ratio) for ratio in ratios))
        if abs(mean - float(size.replace(",", ""))) > 1:
            problems.append(
                f"{release} {size}× slower than {before} where its {len(ratios)} raw rounds give {mean:.0f}×"
            )
    return problems
