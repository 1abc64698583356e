"""What a subject needs on the host it runs on: placeholders, requirements, configs, preparation."""

from __future__ import annotations

import getpass
import grp
import os
import pwd
import shlex
import shutil
import string
import subprocess
import sys
import sysconfig
from pathlib import Path

from benchsite.errors import BenchError
from benchsite.harness.basics.imports import imported
from benchsite.harness.processes.processes import LOOPBACK
from benchsite.model.recipe import AnySubject, Recipe, fill_all, fill_placeholders
from benchsite.model.sweep import SWEEP_DIR
from benchsite.model.variant import VARIANTS_DIR


def base_values(recipe: Recipe, host: str = LOOPBACK) -> dict[str, str]:
    """Placeholders every command and template may use; {host} is the address servers listen on."""
    user = "www-data" if os.geteuid() == 0 else getpass.getuser()  # who servers that drop privileges become
    return {
        "python": sys.executable,
        "bin": str(Path(sys.executable).parent),
        "host": host,
        "recipe_dir": str(recipe.directory.resolve()),
        "site_packages": sysconfig.get_paths()["purelib"],
        "sweep": str(SWEEP_DIR),  # a release sweep's environments
        "variants": str(VARIANTS_DIR),  # an A/B run's changed files
        "user": user,
        "group": grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name,
    }


def missing_requirement(recipe: Recipe, subject: AnySubject, values: dict[str, str]) -> str | None:
    """Why a subject cannot run here (a program or module it needs is absent), or None."""
    for program in subject.requires_programs:
        path = fill_placeholders(program, values, subject.name)
        if shutil.which(path) is None:
            return f"no {path} on this system"
    for module in subject.requires:
        error = imported(module).error
        if error is not None:
            return f"import {module} failed: {error}"
    return None


def render_templates(subject: AnySubject, recipe: Recipe, values: dict[str, str]) -> dict[str, str]:
    """The subject's config templates ($name fields) filled: {target file name: text}."""
    rendered = {}
    for template in subject.templates:
        source = template.source
        try:
            rendered[template.target] = string.Template((recipe.directory / source).read_text()).substitute(values)
        except KeyError as error:
            known = ", ".join("$" + key for key in sorted(values))
            raise BenchError(
                f"{recipe.directory / source}: unknown field ${error.args[0]}: I know about {known}"
            ) from None
        except (OSError, UnicodeDecodeError) as error:
            raise BenchError(f"{recipe.directory / source}: cannot read the template ({error})") from None
        except ValueError as error:  # a lone $ or ${ without a name
            raise BenchError(f"{recipe.directory / source}: {error}: write $$ for a literal $") from None
    return rendered


def run_prepare(subject: AnySubject, values: dict[str, str], cwd: Path) -> str:
    """Run a subject's preparation command (it makes files in {workdir}) and return its output;
    a failure stops the run."""
    if not subject.prepare:
        return ""
    argv = fill_all(subject.prepare, values, subject.name)
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        raise BenchError(
            f"preparing {subject.name!r} failed ({lines[-1] if lines else f'exit {result.returncode}'})"
            f": run it by hand to see why: cd {shlex.quote(str(cwd))} && {shlex.join(argv)}"
        )
    return result.stdout + result.stderr
