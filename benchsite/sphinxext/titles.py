"""A recipe page's title, given once: in its recipe.toml. The page's heading is the substitution |recipe-title|,
which each page of docs/recipes/ gets defined from the recipe of its name as Sphinx reads it."""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from benchsite.errors import BenchError
from benchsite.model.recipe import available_recipes, load_recipe

LOGGER = logging.getLogger(__name__)
SUBSTITUTION = "recipe-title"
# Every character but letters, digits and spaces is escaped: nothing of a title reads as reStructuredText markup
# (emphasis, roles, references, substitutions, a link), only as the text it is. The loader refuses a title of more
# than one line, which could start a directive of its own.
_MARKUP = re.compile(r"([^A-Za-z0-9 ])")


def define_recipe_title(app: Sphinx, docname: str, source: list[str]) -> None:
    """Append the definition of |recipe-title| to a recipe page whose heading uses it."""
    folder, _, name = docname.partition("/")
    if folder != "recipes" or f"|{SUBSTITUTION}|" not in source[0]:
        return
    recipes = Path(app.config.bench_recipes_dir)
    if name not in available_recipes(recipes):
        LOGGER.warning(f"{docname}: |{SUBSTITUTION}| names no recipe: a recipe page is named as its recipe")
        return
    try:
        title = load_recipe(name, recipes, Path(app.config.bench_conf_dir)).title
    except BenchError as error:
        LOGGER.warning(str(error))
        return
    escaped = _MARKUP.sub(r"\\\1", title)
    source[0] += f"\n\n.. |{SUBSTITUTION}| replace:: {escaped}\n"


def setup_titles(app: Sphinx) -> None:
    app.connect("source-read", define_recipe_title)
