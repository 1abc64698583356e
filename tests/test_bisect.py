"""A side built from a package's own source, and `invoke bisect` down its history, on a small git repository made
here: a toy WSGI app package whose commit K makes every kept-alive request sleep, whose commit K+1 does not build,
and whose commit K+2 builds again."""

from __future__ import annotations

import math
import os
import subprocess
import textwrap
from html import unescape
from pathlib import Path

import pytest

from benchsite.commands.bisect import _bisected, called
from benchsite.errors import BenchError
from benchsite.harness.variants.sources import BuildError, built, commit, scrubbed
from benchsite.model.bisection import STATE_FILE, Bisection, Step
from benchsite.model.variant import SourceCommit, parse_variant
from benchsite.records import read_json
from benchsite.results.comparing import paired_cells
from benchsite.results.store import load_run
from benchsite.results.view import RunView
from conftest import ToyRecipes, run_invoke

SLOW = 4  # the commit that makes kept-alive requests sleep
BROKEN = 5  # the commit that does not build (the one after mends it)
COMMITS = 7  # after the good one (0): the bad one is the last
APP = """
import time

SLEEP_S = {sleep}


def app(environ, start_response):
    if SLEEP_S and environ.get("HTTP_CONNECTION", "").lower() == "keep-alive":
        time.sleep(SLEEP_S)
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "5")])
    return [b"hello"]
"""
PYPROJECT = """
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "toyapp"
version = "0.{number}"
"""
SERVE = """
import sys

from cheroot import wsgi
from toyapp import app

wsgi.Server(("127.0.0.1", int(sys.argv[1])), app, numthreads=1).safe_start()
"""
SUBJECT = """
[[subjects]]
name = "toy"
label = "Toy app"
argv = ["{python}", "{recipe_dir}/serve.py", "{port}"]
packages = ["cheroot"]
expect = { status = 200, body = "hello" }
"""
BISECT_CONF = """
[profiles.bisect]
requests = 300
seconds = 2
rounds = 2
starts = 2
sequential = true
smallest_change = 0.25
max_rounds = 8
time_budget_s = 90
warmup_requests = 50
"""


def _git(repo: Path, *argv: str) -> str:
    when = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    names = {"GIT_AUTHOR_NAME": "toy", "GIT_AUTHOR_EMAIL": "toy@example.org"}
    names |= {"GIT_COMMITTER_NAME": "toy", "GIT_COMMITTER_EMAIL": "toy@example.org"}
    done = subprocess.run(
        ["git", "-C", str(repo), *argv], capture_output=True, text=True, check=True, env={**os.environ, **when, **names}
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def toy_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The toy package's repository and its commits, good (0) to bad (COMMITS); tags good and bad."""
    repo = tmp_path_factory.mktemp("toyapp")
    _git(repo, "init", "--quiet", "--initial-branch=main")
    ids = []
    for number in range(COMMITS + 1):
        (repo / "toyapp").mkdir(exist_ok=True)
        (repo / "toyapp" / "__init__.py").write_text(APP.format(sleep=0.005 if number >= SLOW else 0))
        project = PYPROJECT.format(number=number)
        (repo / "pyproject.toml").write_text("[build-system\n" if number == BROKEN else project)
        (repo / f"change-{number}.txt").write_text(f"commit {number}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "--quiet", "-m", f"commit {number}")
        ids.append(_git(repo, "rev-parse", "HEAD"))
    _git(repo, "tag", "good", ids[0])
    _git(repo, "tag", "bad", ids[-1])
    return repo, ids


def test_a_source_side_is_read_and_shows_no_machine_path(tmp_path: Path) -> None:
    side = parse_variant(f"toyapp@git:{tmp_path}#good", "b")
    assert side.kind == "source" and side.source.revision == "good" and side.source.where == str(tmp_path)
    assert side.shown == f"toyapp@git:{tmp_path.name}#good"
    url = parse_variant("cheroot@git:https://github.com/cherrypy/cheroot#v8.0.0", "a")
    assert url.shown == "cheroot@git:https://github.com/cherrypy/cheroot#v8.0.0"
    assert parse_variant(f"toyapp@dir:{tmp_path}", "a").shown == f"toyapp@dir:{tmp_path.name}"


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("toyapp@git:/nowhere/at/all#v1", "no folder /nowhere/at/all: give the repository of toyapp"),
        ("toyapp@git:/tmp#", "give the repository and the revision"),
        ("toyapp@dir:/nowhere/at/all", "no folder /nowhere/at/all: give the source folder of toyapp"),
    ],
)
def test_a_source_side_of_a_missing_repository_is_one_line(given: str, says: str) -> None:
    with pytest.raises(BenchError, match=says) as raised:
        parse_variant(given, "b")
    assert "\n" not in str(raised.value)


def test_a_path_in_a_tool_s_output_keeps_its_last_part_alone() -> None:
    said = scrubbed("Processing /home/someone/src/cheroot\n  Created wheel: /work/x/build/a-1.0-py3-none-any.whl\n")
    assert said == ["Processing cheroot", "  Created wheel: a-1.0-py3-none-any.whl"]
    assert scrubbed("see https://pypi.org/simple/cheroot/") == ["see https://pypi.org/simple/cheroot/"]


@pytest.mark.integration
def test_a_revision_builds_once_into_a_wheel_recorded_with_its_commit(toy_repo: tuple[Path, list[str]]) -> None:
    repo, ids = toy_repo
    record, wheel = built(parse_variant(f"toyapp@git:{repo}#good", "a").source)
    assert wheel.is_file() and wheel.name == record.wheel and record.version == "0.0"
    assert record.commit is not None and record.commit.id == ids[0] and record.commit.subject == "commit 0"
    assert record.repository == repo.name and not any(str(repo) in line for line in record.log)
    again, _ = built(parse_variant(f"toyapp@git:{repo}#{ids[0][:8]}", "a").source)
    assert again == record  # the same commit: built once


@pytest.mark.integration
def test_a_revision_that_does_not_build_an_unknown_one_or_another_distribution_is_one_line(
    toy_repo: tuple[Path, list[str]],
) -> None:
    repo, ids = toy_repo
    with pytest.raises(BuildError, match=rf"toyapp at {ids[BROKEN][:10]} does not build \(") as broken:
        built(parse_variant(f"toyapp@git:{repo}#{ids[BROKEN]}", "a").source)
    with pytest.raises(BenchError, match=f"{repo.name} has no revision 'v9': give a commit, tag or branch") as unknown:
        built(parse_variant(f"toyapp@git:{repo}#v9", "a").source)
    with pytest.raises(BenchError, match="its source builds toyapp, not cheroot") as other:
        built(parse_variant(f"cheroot@git:{repo}#good", "a").source)
    for raised in (broken, unknown, other):
        assert "\n" not in str(raised.value)


class _Verdicts:
    """The bisection's measuring, its verdicts given per commit (its order of calls kept): for the stepping alone,
    over a real repository; the real A/B runs are in the test below."""

    def __init__(self, folder: Path, verdicts: dict[str, list[str]], stop_after: int = 0) -> None:
        self.folder, self.verdicts, self.stop_after, self.calls = folder, verdicts, stop_after, []

    def step(self, state: Bisection, pick: SourceCommit) -> Step:
        if self.stop_after and len(self.calls) == self.stop_after:
            raise KeyboardInterrupt
        self.calls.append(pick.id)
        verdict = self.verdicts[pick.id].pop(0)
        return Step(commit=pick, against=state.good.id, verdict=verdict, said="given", run="", seconds=0.0)


def _state(repo: Path, ids: list[str]) -> Bisection:
    good, bad = commit(repo, ids[0], repo.name), commit(repo, ids[-1], repo.name)
    return Bisection(
        recipe="toy", package="toyapp", repository=repo.name, good=good, bad=bad, candidates=COMMITS,
        subjects=("toy",), cells=("c1-k",), profile="bisect", signature={"toy c1-k": 0.1}, in_work=False,
        confirm="confirm",
    )  # fmt: skip


def _truth(ids: list[str]) -> dict[str, list[str]]:
    return {c: ["bad"] * 3 if n >= SLOW else ["good"] * 3 for n, c in enumerate(ids)}


def test_an_undecided_commit_is_measured_again_then_skipped_and_the_first_bad_is_still_found(
    toy_repo: tuple[Path, list[str]], tmp_path: Path
) -> None:
    repo, ids = toy_repo
    verdicts = _truth(ids) | {ids[BROKEN]: ["does not build"], ids[SLOW - 1]: ["undecided", "undecided"]}
    measure = _Verdicts(tmp_path, verdicts)
    found = _bisected(_state(repo, ids), measure, repo)  # type: ignore[arg-type]
    # SLOW - 1 skipped: the first bad is SLOW or the one skipped before it; said as both
    assert found.first_bad is not None and found.first_bad.id == ids[SLOW]
    assert set(found.remaining) == {ids[SLOW - 1], ids[SLOW]}
    assert measure.calls.count(ids[SLOW - 1]) == 2  # measured again once, then skipped
    plain = _Verdicts(tmp_path, _truth(ids) | {ids[BROKEN]: ["does not build"]})
    clean = _bisected(_state(repo, ids), plain, repo)  # type: ignore[arg-type]
    assert clean.first_bad is not None and clean.first_bad.id == ids[SLOW] and not clean.remaining
    assert clean.parent is not None and clean.parent.id == ids[SLOW - 1]
    assert "toyapp/__init__.py" in clean.touched
    assert len(plain.calls) <= (COMMITS).bit_length() + 1


def test_an_interrupted_bisection_goes_on_from_its_kept_steps(toy_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, ids = toy_repo
    first = _Verdicts(tmp_path, _truth(ids), stop_after=1)
    with pytest.raises(KeyboardInterrupt):
        _bisected(_state(repo, ids), first, repo)  # type: ignore[arg-type]
    kept = Bisection.from_json(read_json(tmp_path / STATE_FILE), tmp_path)
    assert [step.commit.id for step in kept.steps] == first.calls
    rest = _Verdicts(tmp_path, _truth(ids))
    found = _bisected(kept, rest, repo)  # type: ignore[arg-type]
    assert found.first_bad is not None and found.first_bad.id == ids[SLOW]
    assert first.calls[0] not in rest.calls  # not measured again


@pytest.mark.integration
def test_bisect_finds_the_commit_that_made_kept_alive_requests_slow(
    toy: ToyRecipes, toy_repo: tuple[Path, list[str]]
) -> None:
    repo, ids = toy_repo
    directory = toy.add("toybisect", SUBJECT, conf=BISECT_CONF, matrix="concurrency = [1]\nkeepalive = [false, true]")
    (directory / "serve.py").write_text(textwrap.dedent(SERVE))
    argv = ["bisect", "toybisect", "--package", "toyapp", "--good", "good", "--bad", "bad", "--repo", str(repo)]
    argv += ["--subjects", "toy", "--cells", "c1-k", "--data-dir", str(toy.data_dir)]
    done = run_invoke(*argv, env=toy.env, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    [state_path] = toy.data_dir.glob(f"toybisect/*/{STATE_FILE}")
    state = Bisection.from_json(read_json(state_path), state_path)
    # whatever a busy machine gives: the commit found is the slow one, or a skip leaves it among those said
    assert state.first_bad is not None
    assert state.first_bad.id == ids[SLOW] or ids[SLOW] in state.remaining, state
    for step in state.steps:
        if step.commit.id == ids[BROKEN]:
            assert step.verdict == "does not build"
        elif step.verdict in ("good", "bad"):
            assert (step.verdict == "bad") == (ids.index(step.commit.id) >= SLOW), step
    assert state.last and (state_path.parent / state.last / "run.json").is_file()
    assert "first bad commit" in done.stderr + done.stdout


def test_bisect_refuses_a_missing_repository_in_one_line(toy: ToyRecipes) -> None:
    toy.add("toyrefused", SUBJECT, conf=BISECT_CONF)
    argv = ["bisect", "toyrefused", "--package", "toyapp", "--good", "a", "--bad", "b", "--repo", "/nowhere/at/all"]
    done = run_invoke(*argv, "--data-dir", str(toy.data_dir), env=toy.env)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "--repo /nowhere/at/all: no folder there" in done.stderr
    assert not toy.data_dir.exists() or not any(toy.data_dir.iterdir())


COMMITTED = Path(__file__).resolve().parents[1] / "data" / "experiments" / "bisect" / "cherrypy-speed"


def test_the_releases_page_tells_the_committed_bisection_from_its_record(committed_site: Path) -> None:
    """The page names the commit the committed bisection found, linked, with every commit it measured, and its A/B
    against its parent as that run's raw reports give it (B ÷ A of the median req/s, from the run's record)."""
    [path] = COMMITTED.glob(f"*/{STATE_FILE}")
    state = Bisection.from_json(read_json(path), path)
    assert state.first_bad is not None and state.last
    html = unescape((committed_site / "recipes" / "cherrypy-speed-releases.html").read_text())
    assert f'href="https://github.com/cherrypy/cheroot/commit/{state.first_bad.id}"' in html
    assert state.first_bad.subject in html and state.first_bad.date[:10] in html
    for step in state.steps:
        assert step.commit.id[:10] in html and step.said in html
    assert f"{len(state.steps)} measured steps among the {state.candidates} commits" in html


def test_each_committed_step_is_called_as_its_runs_raw_figures_say() -> None:
    """Every step of the committed bisection carries the verdict its own run gives, and a step called bad has, in
    some cell the last release changed in, a median B ÷ A of the raw req/s beyond halfway to that release's;
    one called good has it short of halfway in every such cell (restated here from the runs' figures)."""
    [path] = COMMITTED.glob(f"*/{STATE_FILE}")
    state = Bisection.from_json(read_json(path), path)
    assert state.steps and not state.in_work
    for step in state.steps:
        if not step.run:
            continue
        view = RunView(load_run(path.parent / step.run))
        assert called(paired_cells(view), state.signature, state.in_work) == (step.verdict, step.said)
        beyond = []
        for where, bad in state.signature.items():
            subject, cell = where.split()
            a, b = (view.figure(f"{subject}-{side}", cell) for side in ("a", "b"))
            assert a is not None and b is not None
            ratio = b.summary.median() / a.summary.median()  # type: ignore[operator]
            beyond.append(ratio < math.sqrt(bad) if bad < 1 else ratio > math.sqrt(bad))
        if step.verdict == "bad":
            assert any(beyond), step
        if step.verdict == "good":
            assert not any(beyond), step
