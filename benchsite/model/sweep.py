"""A release sweep's environments: one virtualenv per release of a package, made once under build/sweep/.

Each environment keeps a record (release.json) of what it holds: the release, the checksum of the file pip
installed it from, the patch that makes it run on today's Python, and every distribution pip resolved beside
it. A run copies the record into its subjects' origins.
"""

from __future__ import annotations

from pathlib import Path

from benchsite.records import Record, Seq, Text

SWEEP_DIR = Path(__file__).resolve().parents[2] / "build" / "sweep"  # ignored by git
RELEASE_FILE = "release.json"


def release_folder(package: str, release: str) -> str:
    """The environment's folder name under build/sweep/: CherryPy-3.2.4."""
    return f"{package}-{release}"


def release_slug(release: str) -> str:
    """A release as part of a subject or claim name: 3.2.4 -> 3_2_4."""
    return release.replace(".", "_")


class ReleaseEnv(Record):
    """build/sweep/<package>-<release>/release.json."""

    package: Text
    release: Text
    dist_file: Text  # the sdist or wheel pip installed the release from
    dist_sha256: Text
    patch: str | None  # conf/sweep/... applied to the installed package, or None
    patch_sha256: str | None
    installed: Seq[str]  # `pip freeze` of the environment: the release and what pip resolved beside it
    made_at: Text
    made_in_s: float

    @property
    def folder(self) -> str:
        return release_folder(self.package, self.release)

    def described(self) -> str:
        """For a run's origins: the release, its file, its patch and what came with it."""
        patched = f", patched with {self.patch} (sha256 {self.patch_sha256})" if self.patch else ", unpatched"
        others = [line for line in self.installed if not line.lower().startswith(self.package.lower() + "==")]
        beside = f"; beside it: {', '.join(others)}" if others else ""
        return f"{self.package} {self.release} from {self.dist_file}{patched}{beside}"
