"""Text from a recipe, a conf or a run reaches a page as the text it is: no markup of its own (reStructuredText,
HTML, a chart's mathtext), and a title or label of more than one line is refused where the file is read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tiny_site import build

from benchsite.errors import BenchError
from benchsite.model.columns import read_form
from benchsite.model.recipe import load_recipe
from committed import COMMITTED_DATA
from conftest import REPO

RECIPE = "cherrypy-speed"
RUN = COMMITTED_DATA / RECIPE / "20261123T071248.420032Z-full"  # pinned by its id
# One line of everything a page could read as markup: HTML, reStructuredText's inline markup, roles, references,
# substitutions, footnotes, a directive's start, and matplotlib's mathtext.
HOSTILE = (
    "Fast <script>alert(1)</script> javascript:alert(2) *em* `ref`_ |sub| [1]_ :doc:`index` .. raw:: html "
    r"$\alpha$ \ & end"
)


def hostile_recipes(tmp_path: Path, title: str, label: str) -> Path:
    """A copy of the recipes with cherrypy-speed's title and first subject's label replaced."""
    recipes = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes" / RECIPE, recipes / RECIPE)
    recipe_file = recipes / RECIPE / "recipe.toml"
    text = recipe_file.read_text()
    text = text.replace('title = "How fast is CherryPy?"', f"title = {json.dumps(title)}", 1)
    text = text.replace('label = "CherryPy framework"', f"label = {json.dumps(label)}", 1)
    recipe_file.write_text(text)
    return recipes


@pytest.mark.parametrize("field", ["title", "label"])
def test_a_title_or_label_of_more_than_one_line_is_refused_in_one_line(tmp_path: Path, field: str) -> None:
    two_lines = "Fast\n\n.. raw:: html\n\n   <script>alert(1)</script>"
    title, label = (two_lines, "CherryPy framework") if field == "title" else ("How fast?", two_lines)
    recipes = hostile_recipes(tmp_path, title, label)
    with pytest.raises(BenchError) as refused:
        load_recipe(RECIPE, recipes, REPO / "conf")
    said = str(refused.value)
    assert "\n" not in said and "recipe.toml" in said and ("title" in said if field == "title" else "label" in said)


def test_hostile_text_in_every_field_a_page_shows_reaches_it_as_text(tmp_path: Path) -> None:
    recipes = hostile_recipes(tmp_path, f"Title {HOSTILE}", f"Label {HOSTILE}")
    data = tmp_path / "data"
    shutil.copytree(RUN, data / RECIPE / RUN.name)
    run_file = data / RECIPE / RUN.name / "run.json"
    document = read_form(json.loads(run_file.read_text()))
    document["title"] = f"Run title {HOSTILE}"
    for subject in document["subjects"]:
        subject["label"] = f"Subject {subject['name']} {HOSTILE}"
        for cell in subject["cells"]:
            cell["label"] = f"Cell {cell['name']} {HOSTILE}"
    run_file.write_text(json.dumps(document))
    body = (
        "|recipe-title|\n==============\n\n"
        f".. bench-recipe:: {RECIPE}\n\n.. bench-subjects::\n\n.. bench-results::\n\n.. bench-chart::\n\n"
        ".. bench-raw::\n"
    )
    built = build(tmp_path, body, data_dir=data, recipes_dir=recipes, page=f"recipes/{RECIPE}")
    assert not built.warnings, built.warnings
    assert "<script>alert(1)</script>" not in built.html and 'href="javascript:' not in built.html
    assert f"Title {HOSTILE}" in built.text  # the heading, every character as written
    shown = [f"Subject framework {HOSTILE}", f"Cell c1 {HOSTILE}"]
    assert all(text in built.text for text in shown), [text for text in shown if text not in built.text]
    charts = [path.read_text() for path in built.outdir.rglob("*.svg")]
    drawn = [chart for chart in charts if "Subject framework Fast" in chart]  # the label, drawn as text
    assert drawn and all("α" not in chart for chart in drawn)  # "$\\alpha$" drawn as written, not as mathtext
    assert all("<script>alert(1)</script>" not in chart for chart in charts)
