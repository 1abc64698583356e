"""Package environments of variants: one virtualenv per set of pinned distributions, made once under build/sweep/.

Two ways to resolve what comes beside the pins:

- *of its time* (a release sweep's release, ``release:VERSION``): every other distribution resolved no newer
  than the newest pinned release's upload time, so that CherryPy 9.0.0 runs on a cheroot of January 2017;
- *as the checkout has it* (``NAME==VERSION``): every other distribution at the version this checkout's
  environment holds, so that the pins are the only difference.

Each environment keeps a record (environment.json) of what it holds: the pins, the file each pinned
distribution was installed from and its checksum, the patch that makes an old release run on today's Python,
and every distribution installed. A run copies it into its subjects' origins and its variants.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import Field

from benchsite.model.variant import canonical
from benchsite.records import Record, Seq, Text

SWEEP_DIR = Path(__file__).resolve().parents[2] / "build" / "sweep"  # ignored by git
ENV_FILE = "environment.json"


def release_slug(release: str) -> str:
    """A release as part of a subject or claim name: 3.2.4 -> 3_2_4."""
    return release.replace(".", "_")


class EnvWanted(Record):
    """What an environment is made of, before it is made: the key it is found by."""

    pins: dict[str, str]  # distribution -> version
    beside: Seq[str]  # distributions installed beside the pins at the checkout's versions (none: of its time)
    resolved_as_of: str | None  # of its time: no distribution uploaded later (RFC 3339); None: the checkout's
    constraints: Seq[str]  # the checkout's NAME==VERSION the others keep to (empty where of its time)
    patch: str | None  # conf/sweep/... applied to the installed packages, or None
    patch_sha256: str | None
    # pinned distribution -> the wheel built from its source (NAME@git:...), under build/sources/, with its sha256
    # in the folder's name: another build is another environment
    wheels: dict[str, str] = Field(default_factory=dict)
    wheels_sha256: dict[str, str] = Field(default_factory=dict)

    @property
    def folder(self) -> str:
        """Its folder under build/sweep/: CherryPy-3.2.4-1a2b3c4d (the pins, then a digest of the rest)."""
        pinned = "+".join(f"{name}-{version}" for name, version in self.pins.items())
        keyed = self.to_json()
        if not self.wheels:  # as before wheels were known: the folders of pins and releases keep their names
            keyed = {key: value for key, value in keyed.items() if key not in ("wheels", "wheels_sha256")}
        digest = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:8]
        return f"{pinned}-{digest}"

    @property
    def requirements(self) -> tuple[str, ...]:
        return tuple(f"{name}=={version}" for name, version in self.pins.items())


class PackageEnv(Record):
    """build/sweep/<folder>/environment.json."""

    wanted: EnvWanted
    dist_files: dict[str, Text]  # pinned distribution -> the sdist or wheel it was installed from
    dist_sha256: dict[str, Text]  # pinned distribution -> that file's sha256
    installed: Seq[str]  # `pip freeze` of the environment: the pins and everything resolved beside them
    made_at: Text
    made_in_s: float

    @property
    def folder(self) -> str:
        return self.wanted.folder

    def described(self) -> str:
        """For a run's origins: the pins, their files, the patch, how the rest was resolved and what came."""
        pins = ", ".join(f"{name} {version} from {self.dist_files[name]}" for name, version in self.wanted.pins.items())
        patch = self.wanted.patch
        patched = f", patched with {patch} (sha256 {self.wanted.patch_sha256})" if patch else ", unpatched"
        when = self.wanted.resolved_as_of
        resolved = f"as of {when}" if when else "as this checkout has them"
        pinned = {canonical(name) for name in self.wanted.pins}
        others = [line for line in self.installed if canonical(line.split("==")[0]) not in pinned]
        beside = f"; beside them, resolved {resolved}: {', '.join(others)}" if others else ""
        return f"{pins}{patched}{beside}"
