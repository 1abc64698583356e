"""The Sphinx extension: directives that read data/ and render tables, charts and verdicts.

Enable it with ``extensions = ["benchsite.sphinxext"]``; ``bench_data_dir``
(relative to conf.py) says where the runs are.
"""

from __future__ import annotations

import gc
import hashlib
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment

from benchsite import __version__
from benchsite.results.store import forget_views
from benchsite.sphinxext.aa_runs import BenchAa
from benchsite.sphinxext.answer import BenchAnswer
from benchsite.sphinxext.base import BenchRecipe
from benchsite.sphinxext.bisection import BenchBisection
from benchsite.sphinxext.calibration import BenchCalibration
from benchsite.sphinxext.chart_directive import BenchChart
from benchsite.sphinxext.claims import BenchClaims, BenchVerdictRule
from benchsite.sphinxext.comparison import BenchCompare, BenchOriginal, BenchPublished
from benchsite.sphinxext.environment import BenchEnvironment, BenchOverhead, BenchSubjects
from benchsite.sphinxext.exports import setup_exports
from benchsite.sphinxext.forest import BenchForest
from benchsite.sphinxext.glossary import BenchGlossary
from benchsite.sphinxext.history import BenchHistory
from benchsite.sphinxext.latency import BenchLatency
from benchsite.sphinxext.listings import setup_listings
from benchsite.sphinxext.memory import BenchMemory
from benchsite.sphinxext.method import (
    BenchHogged,
    BenchPairing,
    BenchPower,
    BenchPowerSaid,
    BenchSlices,
    BenchStability,
)
from benchsite.sphinxext.nodes import (
    BenchDetails,
    bench_block,
    bench_chart,
    bench_data,
    bench_details,
    depart_block_html,
    depart_data_html,
    depart_details_html,
    depart_details_other,
    for_other_builders,
    skip_chart,
    visit_block_html,
    visit_chart_html,
    visit_chart_text,
    visit_data_html,
    visit_details_html,
    visit_details_other,
    without_data_attributes,
)
from benchsite.sphinxext.paced_ceiling import BenchPacedCeiling
from benchsite.sphinxext.pivot import BenchDifference, BenchPivot
from benchsite.sphinxext.raw import BenchCommands, BenchRaw
from benchsite.sphinxext.releases import BenchReleases
from benchsite.sphinxext.results import BenchFlagRule, BenchResults
from benchsite.sphinxext.sequential import BenchSequential
from benchsite.sphinxext.setup_steps import BenchSetup
from benchsite.sphinxext.summary import BenchSummary, BenchVerdicts
from benchsite.sphinxext.titles import setup_titles
from benchsite.sphinxext.topology import BenchTopology
from benchsite.sphinxext.versus import BenchVersus
from benchsite.sphinxext.work import BenchCpuSplit, BenchFlame, BenchWork

DIRECTIVES = {
    "bench-results": BenchResults,
    "bench-flag-rule": BenchFlagRule,
    "bench-chart": BenchChart,
    "bench-raw": BenchRaw,
    "bench-environment": BenchEnvironment,
    "bench-commands": BenchCommands,
    "bench-published": BenchPublished,
    "bench-original": BenchOriginal,
    "bench-setup": BenchSetup,
    "bench-releases": BenchReleases,
    "bench-compare": BenchCompare,
    "bench-answer": BenchAnswer,
    "bench-glossary": BenchGlossary,
    "bench-claims": BenchClaims,
    "bench-verdict-rule": BenchVerdictRule,
    "bench-overhead": BenchOverhead,
    "bench-subjects": BenchSubjects,
    "bench-pivot": BenchPivot,
    "bench-difference": BenchDifference,
    "bench-summary": BenchSummary,
    "bench-history": BenchHistory,
    "bench-verdicts": BenchVerdicts,
    "bench-stability": BenchStability,
    "bench-pairing": BenchPairing,
    "bench-hogged": BenchHogged,
    "bench-power": BenchPower,
    "bench-power-said": BenchPowerSaid,
    "bench-sequential": BenchSequential,
    "bench-slices": BenchSlices,
    "bench-versus": BenchVersus,
    "bench-bisection": BenchBisection,
    "bench-aa": BenchAa,
    "bench-details": BenchDetails,
    "bench-recipe": BenchRecipe,
    "bench-topology": BenchTopology,
    "bench-forest": BenchForest,
    "bench-calibration": BenchCalibration,
    "bench-work": BenchWork,
    "bench-cpu-split": BenchCpuSplit,
    "bench-flame": BenchFlame,
    "bench-latency": BenchLatency,
    "bench-memory": BenchMemory,
    "bench-paced-ceiling": BenchPacedCeiling,
}


def resolve_paths(app: Sphinx, config: Config) -> None:
    """Make the data, recipes and conf folders absolute once, relative to conf.py; note the code's digest
    (a changed extension re-reads every page, as a changed data file re-reads the pages that show it)."""
    for name in ("bench_data_dir", "bench_recipes_dir", "bench_conf_dir"):
        config[name] = str((Path(app.confdir) / config[name]).resolve())
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for source in sorted(package.rglob("*.py")):
        digest.update(source.read_bytes())
    config["bench_code_digest"] = digest.hexdigest()[:16]


def let_go_of_runs(app: Sphinx, env: BuildEnvironment) -> None:
    """Once every page is read, before the PDF is typeset: the runs the pages were made of are read again by
    nothing, and rinohtype's layout needs the memory."""
    if app.builder.format == "pdf":
        forget_views()
        gc.collect()


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("bench_data_dir", "../data", "env", types=[str])
    app.add_config_value("bench_recipes_dir", "../recipes", "env", types=[str])
    app.add_config_value("bench_conf_dir", "../conf", "env", types=[str])
    # The profile whose runs every page shows: the published one; a quick run never replaces it.
    app.add_config_value("bench_profile", "full", "env", types=[str])
    app.add_config_value("bench_code_digest", "", "env", types=[str])
    skip = (skip_chart, None)
    app.add_node(
        bench_chart,
        html=(visit_chart_html, None),
        text=(visit_chart_text, None),
        latex=skip,
        man=skip,
        texinfo=skip,
    )
    other = (visit_details_other, depart_details_other)
    app.add_node(
        bench_details,
        html=(visit_details_html, depart_details_html),
        text=other,
        latex=other,
        man=other,
        texinfo=other,
    )
    app.add_node(bench_data, html=(visit_data_html, depart_data_html))
    app.add_node(bench_block, html=(visit_block_html, depart_block_html))
    for name, directive in DIRECTIVES.items():
        app.add_directive(name, directive)
    setup_listings(app)
    setup_titles(app)
    setup_exports(app)
    app.connect("config-inited", resolve_paths)
    app.connect("env-updated", let_go_of_runs)
    app.connect("doctree-resolved", for_other_builders)
    app.connect("doctree-resolved", without_data_attributes)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
