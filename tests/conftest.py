"""Shared helpers: run the real `invoke` entry point, build throw-away recipes."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from scratch import make_session_scratch, remove_session_scratch, write_bytecode

from ahead import AHEAD, Job
from benchsite.harness.interference.quiet import SETTLE_ENV
from benchsite.harness.processes import machine_lock
from benchsite.harness.processes.machine_lock import measuring

SCRATCH = make_session_scratch()  # before anything makes a temporary file
write_bytecode()
# The suite's runs start at once on a busy machine, and their tests check what holds there (a test of the wait
# itself sets its own); waiting for quiet made a busy machine's suite five times as long.
os.environ[SETTLE_ENV] = "0"

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TOY_SERVER = Path(__file__).resolve().parent / "servers" / "toy_server.py"
INVOKE = [sys.executable, "-m", "invoke"]
# The line an interrupted task ends with: what it stopped, counted.
INTERRUPTED_LINE = re.compile(
    r"interrupted: (stopped the (\d+ )?servers? this task started \(\d+ processes in all\), none left running"
    r"|no server of this task was running on this machine); an unfinished run is not kept"
)


def run_invoke(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run `invoke ARGS` from the repository as a user would, capturing its output."""
    return subprocess.run(
        [*INVOKE, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def processes_mentioning(marker: str) -> list[psutil.Process]:
    """Live processes whose command line contains marker (a test's unique temp path)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(marker in part for part in proc.info["cmdline"] or []):
            found.append(proc)
    return found


@dataclass
class ToyRecipes:
    """A recipes/ and conf/ pair in a temp directory, and the env that points invoke at them."""

    root: Path

    @property
    def env(self) -> dict[str, str]:
        return {
            "INVOKE_BENCH_RECIPES_DIR": str(self.root / "recipes"),
            "INVOKE_BENCH_CONF_DIR": str(self.root / "conf"),
        }

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def add(self, name: str, subjects: str, conf: str = "", matrix: str = "concurrency = [1]") -> Path:
        """Write recipes/<name>/recipe.toml (with a copy of the toy server) and conf/<name>.toml."""
        directory = self.root / "recipes" / name
        directory.mkdir(parents=True)
        shutil.copy(TOY_SERVER, directory / "toy_server.py")
        (directory / "recipe.toml").write_text(
            f'title = "Toy recipe {name}"\n' + textwrap.dedent(subjects) + f'\n[matrix]\ntool = "ab"\n{matrix}\n'
        )
        (self.root / "conf").mkdir(exist_ok=True)
        (self.root / "conf" / f"{name}.toml").write_text(
            "[profiles.quick]\nrequests = 50\nrounds = 1\nwarmup_requests = 0\n" + textwrap.dedent(conf)
        )
        return directory


# A test that uses one of these starts real servers or builds the whole site: the integration tier.
INTEGRATION_FIXTURES = frozenset({"toy", "committed_build", "committed_site"})
# pytest's own handlers. Importing tasks (test_cli_help does) installs the command line's, which end the process
# at once; put back after collection, a Ctrl-C still tears down the fixtures and the background set-up.
PYTEST_SIGNAL_HANDLERS = {
    signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
}
# The tiers beyond the unit tier, as `invoke test --fast` leaves them out.
TIER_MARKERS = ("integration", "browser", "two_hosts", "sweep")


def in_unit_tier(item: pytest.Item) -> bool:
    return not any(item.get_closest_marker(marker) for marker in TIER_MARKERS)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int) -> None:
    """The session's temporary files go with a passing session; a failing one says where they are."""
    kept = remove_session_scratch(SCRATCH, passed=exitstatus == 0)
    if kept:
        terminalreporter.write_line(kept)
    if AHEAD.took_s:  # what a fresh machine's first run spends more time on
        made = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in AHEAD.took_s.items())
        waited = f"; the tests beyond the unit tier waited {AHEAD.waited_s:.0f} s for it" if AHEAD.waited_s >= 1 else ""
        terminalreporter.write_line(f"set-up made beside the tests: {made}{waited}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs an integration fixture, so `invoke test --fast` leaves it out; then put
    the unit tier first (in its files' order), which the background set-up of `ahead` runs beside, and in it
    last the tests that take a result of that set-up: by then it is made, or being made on the other CPU."""
    for item in items:
        if INTEGRATION_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
    made_ahead = AHEAD.fixtures
    items.sort(key=lambda item: (not in_unit_tier(item), bool(made_ahead & set(getattr(item, "fixturenames", ())))))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the background set-up that the selected tests' fixtures need (none when they are only listed)."""
    for signum, handler in PYTEST_SIGNAL_HANDLERS.items():
        signal.signal(signum, handler)
    if not session.config.option.collectonly:
        AHEAD.start({name for item in session.items for name in getattr(item, "fixturenames", ())})


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """No test beyond the unit tier (a benchmark, say) starts while background set-up still runs, nor while
    another benchmark holds the machine: from the first such test on, the session holds the machine's lock
    (the runs its tests start measure under it)."""
    if not in_unit_tier(item):
        AHEAD.finish()
        if not MACHINE_HELD:
            MACHINE.enter_context(measuring(say=lambda line: print(line, file=sys.__stderr__)))
            MACHINE_HELD.append(item.nodeid)


@pytest.fixture(autouse=True)
def unit_tier_never_takes_the_machine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit-tier test that would take the machine's lock fails at once, naming itself, instead of waiting
    behind another benchmark (`invoke test --fast` never waits for the machine)."""
    if in_unit_tier(request.node):

        def refused(*_: object) -> None:
            raise AssertionError(
                f"{request.node.nodeid} takes the machine's lock in the unit tier: give it a tier's marker "
                "(integration) or keep the lock out of what it calls"
            )

        monkeypatch.setattr(machine_lock, "_opened", refused)
        monkeypatch.setenv(machine_lock.FORBIDDEN_ENV, request.node.nodeid)  # and in every process it starts


def pytest_sessionfinish(session: pytest.Session) -> None:
    AHEAD.close()
    MACHINE.close()


MACHINE = ExitStack()  # the machine's benchmark lock, once a test beyond the unit tier has taken it
MACHINE_HELD: list[str] = []  # the test from which on the session holds it


@dataclass(frozen=True)
class SiteBuild:
    html: Path
    said: list[str]  # every line the build printed


def build_committed_site() -> SiteBuild:
    """`invoke docs` on the committed data alone, and what it printed."""
    from committed import COMMITTED_DATA

    html = Path(tempfile.mkdtemp(prefix="committed-")) / "html"
    result = run_invoke("docs", "--output", str(html), "--data-dir", str(COMMITTED_DATA))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    return SiteBuild(html, (result.stdout + result.stderr).splitlines())


AHEAD.add("committed site", Job("committed_build", build_committed_site, seconds=9))


@pytest.fixture(scope="session")
def committed_build() -> SiteBuild:
    """The site built from the committed data (in the background while the unit tier ran)."""
    return AHEAD.take("committed site")


@pytest.fixture(scope="session")
def committed_site(committed_build: SiteBuild) -> Path:
    """The site built by `invoke docs` from the committed data alone."""
    return committed_build.html


@pytest.fixture
def toy(tmp_path: Path) -> ToyRecipes:
    return ToyRecipes(tmp_path)


TOY_SUBJECT = """
[[subjects]]
name = "toy"
label = "Toy server"
argv = ["{python}", "{recipe_dir}/toy_server.py", "{port}"%s]
expect = { status = 200, body = "hello" }
"""


def toy_subject(*extra_args: str, name: str = "toy") -> str:
    """A [[subjects]] table running the toy server with extra arguments."""
    extra = "".join(f', "{arg}"' for arg in extra_args)
    return (TOY_SUBJECT % extra).replace('name = "toy"', f'name = "{name}"')


@contextmanager
def cpu_hog(cpu: int, seconds: float) -> Iterator[subprocess.Popen[bytes]]:
    """A real busy loop pinned to one CPU, bounded in time."""
    hog = subprocess.Popen(
        [sys.executable, "-c", f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"],
        preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),
    )
    try:
        yield hog
    finally:
        hog.kill()
        hog.wait()
