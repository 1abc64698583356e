"""``.. bench-glossary::``: one word per thing. The verdict states and the metrics explain themselves (their
registries carry their lines); the words the pages use for how a run is made are listed here once."""

from __future__ import annotations

from docutils import nodes

from benchsite.results.claims import State
from benchsite.results.claims.base import Badge
from benchsite.results.metrics import METRICS
from benchsite.sphinxext.base import ReportingDirective
from benchsite.sphinxext.claims import badge_node, verdict_node

WORDS: dict[str, str] = {
    "subject": "what a page measures: a server under load, or a client under test",
    "cell": "one load setting of a recipe: its load tool, concurrency, keep-alive and request count",
    "repetition": "one bounded load run of one subject in one cell, its raw output kept",
    "round": "one repetition of every subject in every cell, the subjects of a cell back to back",
    "further rounds": "rounds of the cells of claims still inconclusive (or wider than the target), within "
    "the profile's max_rounds and time budget",
    "disturbed repetition": "one during which other work took more of the pinned CPUs than the run's settings "
    "allow: kept and shown, left out of intervals and claims (its req/s is a lower bound on the server's), its "
    "round measured again where the profile makes further rounds",
    "measured on a busy machine": "a run with more disturbed repetitions than its settings allow (a quarter, "
    "busy_share): listed, labelled, in the page's history and left out of it where its machine has quiet runs; "
    "a machine with busy runs alone (a laptop) is read from what their undisturbed repetitions measured",
    "machine": "where the servers ran, by its fingerprint; a two-host set-up is a machine of its own",
    "pooled": "every run of one machine as one body of evidence, by a random-effects model",
    "instructions per request": "the user-space instructions a server executes per request, counted under "
    "Valgrind's callgrind after the timed rounds: the same on a busy machine",
    "variant": "what differs when a recipe's subjects are measured several ways in one run: an A/B run's two "
    "sides, or a release sweep's releases of one package",
    "side": "one of an A/B run's two variants, A (the reference) and B (the one compared with it)",
    "release": "one of a release sweep's variants: a release of the swept package in the environment of its day",
    "copy": "one subject as one variant runs it (framework-a, raw-wsgi-8_1_0): every copy of a subject is measured "
    "in the same rounds, back to back",
    "reference": "the variant the others are compared with: side A of an A/B run; in a sweep, the newest release "
    "(and, step by step, the release before each one)",
    "changed": "a comparison whose interval, simultaneous over every comparison of the run, lies wholly beyond the "
    "margin two starts of unchanged code can differ by (none where the run started its servers several times): "
    "one rule for A/B sides and sweep releases, in time (pairs of repetitions that met alike interference) and "
    "in work (counted batches)",
    "sequential": "an A/B run or sweep that looks at every comparison after each round and measures a cell no "
    "more once it is decided: a change called, or its interval within the smallest change that matters "
    "(undecided otherwise, when its rounds or time budget end)",
    "confidence sequence": "an interval that holds at its level over every look at once, however often the rounds "
    "are looked at while they accrue: what a sequential run's time intervals are",
    "time bound": "a profile's seconds: each ab repetition also ends after that long, its request count the "
    "ceiling; the raw output records how many requests it made",
    "open loop": "requests sent on a fixed schedule whether or not earlier ones were answered (benchsite-paced), "
    "each timed from when it was due: a stall is charged to every request it held up; ab and wrk run a closed "
    "loop instead, each client waiting for its answer before it sends again",
    "capacity": "a server's median req/s in one closed-loop cell of the same run: what its latency profile offers "
    "shares of",
    "sustained": "an offered load at which a server's p99 latency stayed under the target the recipe names, and at "
    "every lower load too",
    "USS and PSS": "a server's memory summed over its process tree: USS, the pages only its processes map; PSS, "
    "adding each one's share of the pages shared with others (forked workers counted once)",
}


def _entry(term: nodes.Node, text: str) -> nodes.definition_list_item:
    head = nodes.term()
    head += term
    return nodes.definition_list_item("", head, nodes.definition("", nodes.paragraph(text=text)))


class BenchGlossary(ReportingDirective):
    """Four lists: the badges, the verdict states, the metrics, the words of the method."""

    def render(self) -> list[nodes.Node]:
        badges, states = nodes.definition_list(), nodes.definition_list()
        metrics, words = nodes.definition_list(), nodes.definition_list()
        for badge in Badge:
            badges += _entry(badge_node(badge), badge.explained)
        for state in State:
            states += _entry(verdict_node(state), state.explained)
        for metric in METRICS.values():
            metrics += _entry(nodes.literal(text=metric.name), f"{metric.heading} ({metric.unit}): {metric.explained}")
        for word, text in WORDS.items():
            words += _entry(nodes.strong(text=word), text)
        return [
            nodes.rubric(text="What happened against a claim (the badge read first)"),
            badges,
            nodes.rubric(text="Verdicts (the rule's answer, in each claim's sentence and table)"),
            states,
            nodes.rubric(text="Metrics (the names claims and directives use)"),
            metrics,
            nodes.rubric(text="How a run is made"),
            words,
        ]
