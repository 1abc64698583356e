"""`invoke byo NAME`: build a system that no package registry offers, with the project's patches.

The source is the archive conf/byo.toml pins (checked by its digest) or a folder the user brings
(a checkout of the upstream repository). It is copied to build/byo/NAME/src, patched with
conf/byo/*.patch, and built: Python systems into the project's .venv, autotools systems into
build/byo/NAME/prefix. build/byo/NAME/build.json records the source, the patches and a checksum
of every file the build provides; runs read it to say which build they measured.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import urllib.request
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.basics.environment import debian_package_versions, git_commit, utc_now
from benchsite.harness.basics.imports import imported
from benchsite.model.byo import BUILD_RECORD, ByoBuild, ByoSystem, ProvidedFile, load_byo_conf
from benchsite.model.portable import make_portable

BYO_DIR = Path("build") / "byo"
LOG = "build.log"
LAST_GOOD_LOG = "build.last-good.log"  # the log of the build that is installed, while a new one is tried


def byo_root(repo: Path) -> Path:
    return repo / BYO_DIR


def program_dirs(repo: Path) -> list[Path]:
    """The bin and sbin folders of every autotools build, where recipes look before PATH."""
    return sorted(d for d in byo_root(repo).glob("*/prefix/*bin") if d.is_dir())


def search_path(repo: Path) -> str:
    """PATH with the builds' program folders first (each once)."""
    current = os.environ.get("PATH", os.defpath).split(os.pathsep)
    ahead = [str(d) for d in program_dirs(repo)]
    return os.pathsep.join(ahead + [d for d in current if d not in ahead])


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_builds(repo: Path) -> list[ByoBuild]:
    """Every build record under build/byo/ (a damaged one is skipped: it proves nothing)."""
    builds = []
    for path in sorted(byo_root(repo).glob(f"*/{BUILD_RECORD}")):
        try:
            builds.append(ByoBuild.from_json(json.loads(path.read_text()), path))
        except (BenchError, ValueError, OSError):
            continue
    return builds


class Builder:
    """One build of one system: its folders, its log and the commands it ran."""

    def __init__(self, repo: Path, conf_dir: Path, name: str) -> None:
        systems = load_byo_conf(conf_dir).systems
        if name not in systems:
            raise BenchError(f"no system {name!r} to build: choose one of {', '.join(sorted(systems))}")
        self.repo, self.conf_dir, self.name = repo, conf_dir, name
        self.system: ByoSystem = systems[name]
        self.folder = byo_root(repo) / name
        self.src = self.folder / "src"
        self.prefix = self.folder / "prefix"
        self.log = self.folder / LOG
        self.commands: list[list[str]] = []
        self.placeholders = {
            str(self.src): "{src}",
            str(self.prefix): "{prefix}",
            str(Path(sys.executable).parent): "{bin}",
            str(repo): "{repo}",
        }

    def shown(self, path: Path) -> str:
        return str(path.relative_to(self.repo)) if path.is_relative_to(self.repo) else str(path)

    def run(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        """One build command, its output appended to build.log; a failure names the log and the error line."""
        self.commands.append([make_portable(token, self.placeholders) for token in argv])
        with self.log.open("a") as log:
            log.write(f"\n$ cd {cwd} && {shlex.join(argv)}\n")
            log.flush()
            result = subprocess.run(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env)
        if result.returncode != 0:
            lines = self.log.read_text(errors="replace").splitlines()[-400:]
            lines = lines[max(i for i, line in enumerate(lines) if line.startswith("$ ")) + 1 :]  # this command's
            if argv[0] == "patch":
                raise BenchError(
                    f"building {self.name}: {Path(argv[-1]).name} does not apply to this source ({_why_patch(lines)})"
                    f"{self._fits()}; the whole output is in {self.shown(self.log)}"
                )
            raise BenchError(
                f"building {self.name}: `{shlex.join(argv[:3])}...` failed ({_why_build(lines)[:200]}): "
                f"the whole output is in {self.shown(self.log)}"
            )

    def _fits(self) -> str:
        if self.system.fits is None:
            return ""
        commit = self.system.fits.split()[0]
        return f": the patches fit {self.system.upstream} commit {self.system.fits} (git checkout {commit[:12]})"

    def forget_installed(self) -> None:
        """The build record goes just before the installed build is replaced: a build that fails earlier
        leaves the working one and its record; one that fails later leaves no record of a half-installed one."""
        (self.folder / BUILD_RECORD).unlink(missing_ok=True)

    def check_debian_packages(self) -> None:
        versions = debian_package_versions(list(self.system.apt))
        missing = [name for name, version in versions.items() if version == "not installed"]
        if missing:
            raise BenchError(
                f"building {self.name} needs Debian packages that are not installed: "
                f"apt-get install -y {' '.join(missing)} (as root), then run this again"
            )

    def check_source(self, source: Path | None) -> None:
        """A source folder must hold the tree this kind of build needs: checked before anything is replaced."""
        if source is None:
            if self.system.sdist is None:
                raise BenchError(
                    f"{self.name} builds from your checkout of {self.system.upstream}: "
                    f"git clone {self.system.upstream} DIR, then .venv/bin/invoke byo {self.name} --source DIR"
                )
            return
        if not source.is_dir():
            raise BenchError(
                f"{source} is not a folder: clone {self.system.upstream or 'the source'} and pass its folder"
            )
        needed = "setup.py" if self.system.kind == "python" else "configure.ac"
        if not (source / needed).is_file():
            raise BenchError(
                f"{source} has no {needed}, which this {self.system.kind} build needs (another branch or another "
                f"project?){self._fits()}"
            )

    def fetch_source(self, source: Path | None) -> str:
        """Copy (or download and unpack) the source into src/; returns where it came from."""
        if self.src.exists():
            shutil.rmtree(self.src)
        if source is not None:
            try:
                shutil.copytree(source, self.src, ignore=_not_source, symlinks=True)
            except (OSError, shutil.Error) as error:
                raise BenchError(
                    f"cannot copy {source} ({_first_error(error)}): fix the folder and try again"
                ) from None
            return describe_checkout(source, self.system.upstream)
        assert self.system.sdist is not None  # check_source said so
        archive = self.folder / self.system.sdist.url.rsplit("/", 1)[1]
        if not archive.is_file() or sha256_of(archive) != self.system.sdist.sha256:
            try:
                with urllib.request.urlopen(self.system.sdist.url, timeout=60) as response:
                    archive.write_bytes(response.read())
            except OSError as error:
                raise BenchError(f"cannot download {self.system.sdist.url} ({error}): check the network") from None
        if sha256_of(archive) != self.system.sdist.sha256:
            archive.unlink()
            raise BenchError(f"{self.system.sdist.url} does not have the sha256 conf/byo.toml pins: not building it")
        with tarfile.open(archive) as tar:
            tar.extractall(self.folder / "unpacked", filter="data")
        (top,) = (self.folder / "unpacked").iterdir()
        top.rename(self.src)
        shutil.rmtree(self.folder / "unpacked")
        return f"{archive.name} (sha256 {self.system.sdist.sha256}, {self.system.sdist.url})"

    def apply_patches(self) -> dict[str, str]:
        applied = {}
        for patch in self.system.patches:
            path = self.conf_dir / "byo" / patch
            self.run(["patch", "-p1", "--forward", "--batch", "-i", str(path)], cwd=self.src)
            applied[patch] = sha256_of(path)
        return applied

    def build_python(self) -> list[ProvidedFile]:
        python = sys.executable
        if self.system.pybind11:
            self.run([python, "-m", "pip", "install", f"pybind11=={self.system.pybind11}"], cwd=self.folder)
            include = subprocess.run(
                [python, "-c", "import pybind11; print(pybind11.get_include())"], capture_output=True, text=True
            ).stdout.strip()
            shutil.rmtree(self.src / "third-party" / "pybind11", ignore_errors=True)
            shutil.copytree(Path(include) / "pybind11", self.src / "third-party" / "pybind11")
        wheels = self.folder / "wheel"
        shutil.rmtree(wheels, ignore_errors=True)
        # Compile first: a failed compile leaves the installed build and its record as they were.
        self.run(
            [python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(wheels), str(self.src)],
            cwd=self.folder,
        )
        (wheel,) = wheels.glob("*.whl")
        self.forget_installed()
        self.run([python, "-m", "pip", "install", "--no-deps", "--force-reinstall", str(wheel)], cwd=self.folder)
        return [self.provided_module(module) for module in self.system.provides.modules]

    def provided_module(self, module: str) -> ProvidedFile:
        origin = imported(module).path
        if origin is None:
            raise BenchError(f"built {self.name}, but `import {module}` fails: see {self.shown(self.log)}")
        return ProvidedFile(provides=module, path=portable_path(origin, self.repo), sha256=sha256_of(origin))

    def build_autotools(self) -> list[ProvidedFile]:
        env = {**os.environ, "LIBTOOL": "libtoolize", "NO_CONFIGURE": "1"}
        self.run(["sh", "./autogen.sh"], cwd=self.src, env=env)
        self.run(["./configure", f"--prefix={self.prefix}", *self.system.configure], cwd=self.src)
        for arguments in self.system.make:
            self.run(["make", f"-j{os.cpu_count() or 1}", *arguments], cwd=self.src)
        # Compiled: only now is the installed build (and its record) replaced.
        self.forget_installed()
        if self.prefix.exists():
            shutil.rmtree(self.prefix)
        for arguments in self.system.install:
            self.run(["make", *arguments], cwd=self.src)
        provided = []
        for program in self.system.provides.programs:
            found = [path for path in (self.prefix / "sbin" / program, self.prefix / "bin" / program) if path.is_file()]
            if not found:
                raise BenchError(f"built {self.name}, but no {program} in {self.shown(self.prefix)}: see the log")
            provided.append(
                ProvidedFile(provides=program, path=portable_path(found[0], self.repo), sha256=sha256_of(found[0]))
            )
        return provided

    def build(self, source: Path | None) -> ByoBuild:
        self.check_debian_packages()
        self.check_source(source)  # before anything of a working build is touched
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.log.is_file() and (self.folder / BUILD_RECORD).is_file():  # the working build's log stays beside
            self.log.replace(self.folder / LAST_GOOD_LOG)
        self.log.write_text(f"invoke byo {self.name}, {utc_now()}\n")
        where = self.fetch_source(source)
        patches = self.apply_patches()
        files = self.build_python() if self.system.kind == "python" else self.build_autotools()
        record = ByoBuild(
            name=self.name,
            summary=self.system.summary,
            source=where,
            patches=patches,
            built_at=utc_now(),
            builder=git_commit(self.repo),
            commands=tuple(tuple(argv) for argv in self.commands),
            files=tuple(files),
        )
        (self.folder / BUILD_RECORD).write_text(json.dumps(record.to_json(), indent=2) + "\n")
        return record


def _not_source(folder: str, names: list[str]) -> set[str]:
    """What a source copy leaves out: git's own folder and anything that is not a file, folder or link."""
    skipped = {".git"}
    for name in names:
        path = Path(folder) / name
        if not (path.is_symlink() or path.is_file() or path.is_dir()):
            skipped.add(name)  # a named pipe or socket would block or fail the copy
    return skipped


def _first_error(error: OSError | shutil.Error) -> str:
    if isinstance(error, shutil.Error) and error.args and isinstance(error.args[0], list) and error.args[0]:
        source, _, why = error.args[0][0]
        return f"{source}: {why}"
    return str(error)


def _why_patch(lines: list[str]) -> str:
    """What patch says went wrong: the first failed hunk, else its last line."""
    failed = [line.strip() for line in lines if "FAILED" in line or "malformed" in line or "can't find" in line]
    return (failed or [line.strip() for line in lines if line.strip()] or ["no output"])[0][:200]


_COMPILER_ERROR = re.compile(r":\d+(:\d+)?: (fatal )?error: ")


def _why_build(lines: list[str]) -> str:
    """The compiler's first error line (file:line: error: ...), else the first "error:", else the last line
    that mentions an error, else the last line (pip's own "error: subprocess-exited-with-error" says nothing)."""
    for found in (
        [line.strip() for line in lines if _COMPILER_ERROR.search(line)],
        [line.strip() for line in lines if "error:" in line.lower() and "subprocess-exited-with-error" not in line],
        [line.strip() for line in lines if "error" in line.lower()][-1:],
    ):
        if found:
            return found[0]
    return (lines or ["no output"])[-1]


def describe_checkout(source: Path, upstream: str | None) -> str:
    """A user's source folder as a reader can find it again: its repository and commit."""

    def git(*args: str) -> str:
        result = subprocess.run(["git", "-C", str(source), *args], capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else ""

    commit = git("rev-parse", "HEAD")
    if not commit:
        return f"a source folder without git history (upstream: {upstream or 'unknown'})"
    remote = git("remote", "get-url", "origin")
    if not remote.startswith(("https://", "http://", "git@", "ssh://", "git://")):  # a local path: kept private
        remote = f"{upstream or 'unknown repository'} (cloned from a local copy)"
    described = git("describe", "--tags", "--always")
    dirty = " with local changes" if git("status", "--porcelain", "--untracked-files=no") else ""
    return f"{remote} commit {commit} ({described}){dirty}"


def local_path(portable: str, repo: Path) -> str:
    """A stored record's path as it is on this machine (for the terminal): the placeholders filled in."""
    site = sysconfig.get_paths()["purelib"]
    shown = portable.replace("{site_packages}", site).replace("{repo}", str(repo))
    return str(Path(shown).relative_to(repo)) if Path(shown).is_relative_to(repo) else shown


def portable_path(path: Path, repo: Path) -> str:
    """A path as a stored record keeps it: the venv's site-packages and the project as placeholders."""
    paths = sysconfig.get_paths()
    return make_portable(
        str(path), {paths["purelib"]: "{site_packages}", paths["platlib"]: "{site_packages}", str(repo): "{repo}"}
    )
