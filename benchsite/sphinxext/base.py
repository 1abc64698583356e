"""The bases of every bench directive: warnings instead of tracebacks, the page's recipe, the run shown,
the original page's figures, and the cross-references between tables and raw listings."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from benchsite.errors import BenchError
from benchsite.model.recipe import RECIPE_FILE, load_recipe
from benchsite.model.run import RUN_FILE
from benchsite.results.evidence import Evidence, Pooled
from benchsite.results.integrity import duplicate_error, identities
from benchsite.results.machines import MachineRuns, by_machine
from benchsite.results.published import PUBLISHED_FILE, Published, load_published
from benchsite.results.store import list_runs, load_view, runs_shown
from benchsite.results.view import RunView
from benchsite.sphinxext.listings import note_listing
from benchsite.sphinxext.nodes import data

PAGE_RECIPE = "bench-recipe"  # the page's recipe, set by `.. bench-recipe:: NAME`
NO_RUN_SAID = "bench-no-run-said"  # a page of a recipe with no run yet has said so
PROBLEMS_SAID = "bench-problems-said"  # the data problems a page has warned of, each said once


class NoRunYetError(BenchError):
    """A recipe with no run at all (a page just scaffolded): the page says how to make one, the build goes on."""

    AFTER = " measures one (shown until a full run is committed); the next docs build shows it here."

    def __init__(self, recipe: str) -> None:
        self.command = f".venv/bin/invoke recipe {recipe} --profile quick"
        super().__init__(f"No run yet: `{self.command}`{self.AFTER}")

    def said(self) -> nodes.paragraph:
        """The page's one line in place of its results, the command as code."""
        return nodes.paragraph(
            "",
            "",
            nodes.Text("No run yet: "),
            nodes.literal(text=self.command),
            nodes.Text(self.AFTER),
            classes=["bench-no-run"],
        )


class ReportingDirective(SphinxDirective):
    """A directive whose data problems become one warning naming the file (fatal under -W), never a traceback."""

    def run(self) -> list[nodes.Node]:
        try:
            return self.render()
        except NoRunYetError as missing:  # a new page: said once, where the page's first directive stands
            if self.env.temp_data.get(NO_RUN_SAID):
                return []
            self.env.temp_data[NO_RUN_SAID] = True
            return [missing.said()]
        except BenchError as error:  # said once on a page, however many of its directives meet it
            said: set[str] = self.env.temp_data.setdefault(PROBLEMS_SAID, set())  # type: ignore[assignment]
            if str(error) in said:
                return []
            said.add(str(error))
            return [self.state.document.reporter.warning(str(error), line=self.lineno)]

    def render(self) -> list[nodes.Node]:
        raise NotImplementedError


class BenchRecipe(SphinxDirective):
    """``.. bench-recipe:: NAME``: the recipe of every bench directive below it on the page that names none."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        self.env.temp_data[PAGE_RECIPE] = self.arguments[0]
        return []


class BenchDirective(ReportingDirective):
    """Common ground: the recipe argument (or the page's), the run option, dependencies, warnings."""

    optional_arguments = 1
    option_spec: ClassVar[dict] = {"run": directives.unchanged}

    @property
    def recipe(self) -> str:
        if self.arguments:
            return self.arguments[0]
        if PAGE_RECIPE in self.env.temp_data:
            return str(self.env.temp_data[PAGE_RECIPE])
        raise BenchError(f"{self.name}: which recipe? Name it, or put `.. bench-recipe:: NAME` above on the page")

    def data_dir(self) -> Path:
        return Path(self.config.bench_data_dir)

    def note(self, path: Path) -> None:
        """Rebuild this page when the file changes."""
        self.env.note_dependency(str(path))

    def note_runs(self, recipe_dir: Path) -> None:
        """Rebuild this page when the recipe gets a new run (or loses one)."""
        note_listing(self.env, recipe_dir, f"*/{RUN_FILE}")

    def load_view(self) -> RunView:
        """The run named by :run:, else the reference machine's best-evidenced run of the site's profile
        (bench_profile: full; see `best_evidenced`)."""
        recipe_dir = self.data_dir() / self.recipe
        self.note_runs(recipe_dir)
        wanted = self.options.get("run")
        if wanted:
            path = recipe_dir / wanted
            if not path.is_dir():
                known = ", ".join(p.name for p in list_runs(recipe_dir)) or "none"
                raise BenchError(f"{path}: no such run of {self.recipe!r}: I know about {known}")
        else:
            return self.machine_runs()[0].main  # the reference machine's best-evidenced run
        view = self.checked(load_view(path))
        self.note(view.run.run_file)
        return view

    def checked(self, view: RunView) -> RunView:
        """A run this page may show: a real folder of its recipe's data, holding a run of its recipe."""
        run = view.run
        if run.path.is_symlink():
            raise BenchError(f"{run.path}: a run folder is a symbolic link: put the run itself in data/{self.recipe}/")
        if run.recipe != self.recipe:
            raise BenchError(
                f"{run.run_file}: a run of {run.recipe!r} in the runs of {self.recipe!r}: move it to data/{run.recipe}/"
            )
        return view.require_raw_agreement()

    def machine_runs(self) -> list[MachineRuns]:
        """Every run of the site's profile, machine by machine, the reference machine first."""
        recipe_dir = self.data_dir() / self.recipe
        self.note_runs(recipe_dir)
        views, problems = [], []
        for path in runs_shown(recipe_dir, self.config.bench_profile):
            self.note(path / RUN_FILE)
            try:  # every bad run named in one pass, not one per rebuild
                views.append(self.checked(load_view(path)))
            except BenchError as error:
                problems.append(str(error))
        if problems:
            raise BenchError(problems[0] if len(problems) == 1 else f"{len(problems)} runs: " + " | ".join(problems))
        if not views and (Path(self.config.bench_recipes_dir) / self.recipe / RECIPE_FILE).is_file():
            raise NoRunYetError(self.recipe)
        if not views:
            raise BenchError(f"{recipe_dir}: no run of recipe {self.recipe!r}, and no such recipe under recipes/")
        known: dict[tuple[str, ...], RunView] = {}
        for view in views:
            for identity in identities(view.run, view.content_digest):
                if identity in known:
                    raise duplicate_error(view.run, known[identity].run)
                known[identity] = view
        return by_machine(views, self.reference_machine())

    def evidence(self) -> tuple[Evidence, str]:
        """What the page's numbers rest on, as the verdicts do, and how to say it: the run named by :run:,
        else every run of the reference machine, pooled."""
        if self.options.get("run"):
            view = self.load_view()
            return view, f"run {view.run.run_id}"
        reference = self.machine_runs()[0]
        runs = len(reference.views)
        return Pooled(reference.views), f"{reference.label}, {runs} run{'s' if runs > 1 else ''}"

    def reference_machine(self) -> str | None:
        """The machine the recipe's published.toml names as the page's reference, if any."""
        path = self.data_dir() / self.recipe / PUBLISHED_FILE
        if not path.is_file():
            return None
        self.note(path)
        return load_published(path).reference_machine

    def declared_names(self, view: RunView) -> tuple[set[str], set[str]]:
        """Subject and cell names the recipe declares (a quick run may have fewer), else the run's."""
        run = view.run
        recipes_dir = Path(self.config.bench_recipes_dir)
        if not (recipes_dir / self.recipe / RECIPE_FILE).is_file():
            return {s.name for s in run.subjects} | {s.name for s in run.skipped}, set(run.cell_names)
        self.note(recipes_dir / self.recipe / RECIPE_FILE)
        recipe = load_recipe(self.recipe, recipes_dir, Path(self.config.bench_conf_dir))
        return {s.name for s in recipe.subjects}, {c.name for c in recipe.cells}


class PublishedDirective(BenchDirective):
    """A directive that reads data/<recipe>/published.toml (and its raw reports) besides the run."""

    def load_published(self) -> Published:
        path = self.data_dir() / self.recipe / PUBLISHED_FILE
        self.note(path)
        published = load_published(path)
        for file in published.files:
            self.note(file)
        return published


def raw_label(recipe: str, subject: str, cell: str) -> str:
    """The cross-reference label of a cell's raw listing (made by bench-raw)."""
    return f"bench-raw-{recipe}-{subject}-{cell}"


def link_to_raw(text: str, label: str, **attributes: str) -> nodes.paragraph:
    """A figure that links to the raw output it came from (tagged with what it is, where attributes are given)."""
    reference = addnodes.pending_xref(
        "",
        nodes.inline(text=text),
        refdomain="std",
        reftype="ref",
        reftarget=label,
        refexplicit=True,
        refwarn=True,
    )
    paragraph = nodes.paragraph()
    paragraph += data(reference, **attributes) if attributes else reference
    return paragraph


def selected(option: str | None, available: tuple[str, ...], what: str, source: Path) -> tuple[str, ...]:
    """The names an option lists (comma-separated), checked against what the run has; all if absent."""
    if not option:
        return available
    names = tuple(name.strip() for name in option.split(",") if name.strip())
    unknown = [name for name in names if name not in available]
    if unknown:
        raise BenchError(f"{', '.join(unknown)}: no such {what} in {source}: I know about {', '.join(available)}")
    return names
