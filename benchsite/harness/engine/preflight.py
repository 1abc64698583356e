"""Before anything starts: the checks that refuse a run at once, with a one-line error saying what to do.

The load tools must be installed where the load runs, every server must be reachable on its
{port} (and, across hosts, listen on {host}); CPU pinning is dropped where it cannot be had.
"""

from __future__ import annotations

import os

from benchsite.errors import BenchError
from benchsite.harness.hosts.placement import Placement
from benchsite.model.conf import Settings
from benchsite.model.recipe import AnySubject, Backend, Client, Recipe
from benchsite.tools import AnyCell, load_tool


def effective_settings(settings: Settings, hosts: Placement | None = None) -> Settings:
    """Drop CPU pinning where it cannot be had: on one machine with a single CPU to pin to (a CPU the
    machine lacks is an error: the conf asks for another machine); across two hosts, a server CPU the
    server host lacks or a tool CPU the load host lacks."""
    if hosts is None or hosts.one_machine:
        cpus = set(os.sched_getaffinity(0) if hosts is None else hosts.server.cpus())
        wanted = {cpu for cpu in (settings.server_cpu, settings.load_cpu) if cpu is not None}
        if len(cpus) >= 2 and not wanted <= cpus:
            missing = ", ".join(str(cpu) for cpu in sorted(wanted - cpus))
            usable = ", ".join(str(cpu) for cpu in sorted(cpus))
            raise BenchError(
                f"settings: CPU {missing} is not one this machine can use (it has {usable}): "
                "set server_cpu and load_cpu in the recipe's conf file to two of them"
            )
        pinnable = len(cpus) >= 2
    else:
        pinnable = (settings.server_cpu is None or settings.server_cpu in hosts.server.cpus()) and (
            settings.load_cpu is None or settings.load_cpu in hosts.load.cpus()
        )
    return settings if pinnable else settings.model_copy(update={"server_cpu": None, "load_cpu": None})


def check_tools(
    hosts: Placement, plan: list[tuple[AnySubject, list[AnyCell]]], settings: Settings, also: tuple[str, ...] = ()
) -> dict[str, list[str]]:
    """Every load program the plan runs (and the tools named in `also`) is on the load host; returns how to ask
    each for its version."""
    versions: dict[str, list[str]] = {}
    for tool in sorted({cell.tool for _, cells in plan for cell in cells} | set(also)):
        found = load_tool(tool)
        if found.program is None:
            continue  # the subject under test makes the load itself
        program = settings.program(found)
        if hosts.load.which(program) is None:
            where = "this system" if hosts.load.ssh is None else f"the load host {hosts.load.ssh}"
            raise BenchError(
                f"no {program} on {where}: run `.venv/bin/invoke setup` (needs root) there to install the load tools"
            )
        versions[tool] = [program, *([found.version_flag] if found.version_flag else [])]
    return versions


def check_port_used(recipe: Recipe, subject: AnySubject) -> None:
    """A server whose command never mentions {port} (nor its templates $port) cannot be reached: refuse it now."""
    if isinstance(subject, Client) or any("{port}" in token for token in subject.argv):
        return
    for template in subject.templates:
        try:
            text = (recipe.directory / template.source).read_text(errors="replace")
        except OSError:
            continue  # rendering it reports that
        if "$port" in text or "${port}" in text:
            return
    raise BenchError(
        f"{recipe.recipe_path}: the command of {subject.name!r} never uses {{port}} (and no template "
        "of it uses $port), so the harness could not reach it: pass {port} to the server"
    )


def check_placeable(recipe: Recipe) -> None:
    """Whether the recipe can run with its roles on two hosts: no clients under test, and every server
    listening on {host} (the address given for the server host)."""
    for subject in recipe.subjects:
        _check_placeable(recipe, subject)


def _check_placeable(recipe: Recipe, subject: AnySubject) -> None:
    if isinstance(subject, Client):
        raise BenchError(
            f"{recipe.name} measures clients on the machine of their backend: run it without --hosts "
            "(two-host runs take recipes whose subjects are servers)"
        )
    if isinstance(subject, Backend) or any("{host}" in token for token in subject.argv):
        return
    for template in subject.templates:
        text = (recipe.directory / template.source).read_text(errors="replace")
        if "$host" in text or "${host}" in text:
            return
    raise BenchError(
        f"{recipe.recipe_path}: the command of {subject.name!r} never uses {{host}} (nor a template of it "
        "$host), so on another host it would not listen where the load tool aims: pass {host} to the server"
    )
