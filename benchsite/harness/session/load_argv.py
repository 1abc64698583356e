"""The command of each repetition: the load tool's bounded command aimed at a server, or a client under test's
command aimed at the recipe's backend."""

from __future__ import annotations

from benchsite.errors import BenchError
from benchsite.harness.processes.processes import RunningServer
from benchsite.harness.session.context import RunContext, Started
from benchsite.model.conf import Profile, Settings
from benchsite.model.recipe import AnySubject, Backend, Ceiling, Client, HttpSubject, Server
from benchsite.tools import AnyCell, client_load, external_load
from benchsite.tools.base import ExternalCell
from benchsite.tools.client import ClientCell


def cell_argv(
    server: RunningServer,
    subject: HttpSubject,
    cell: ExternalCell,
    *,
    requests: int,
    settings: Settings,
    address: str,
    seconds: float = 0,
) -> list[str]:
    """The load tool's bounded command for one cell, aimed at the server's address and port; an ab cell also ends
    after `seconds` where given (wrk and the paced tool run for a set time anyway)."""
    url = f"http://{address}:{server.port}{cell.path or subject.path}"
    argv = cell.argv(url, requests, settings.program(cell.TOOL), settings.socket_timeout_s)
    return cell.time_bounded(argv, seconds)


def _backend(started: dict[str, Started]) -> Started:
    """The service that a recipe's clients talk to (its subject of kind backend; the schema ensures one)."""
    return next(s for s in started.values() if isinstance(s.subject, Backend))


def client_argv(subject: Client, cell: ClientCell, backend: Started, profile: Profile) -> list[str]:
    """The command of a client under test for one cell: the backend's URL, request counts, its files."""
    port = backend.values["port2"] if cell.scheme == "https" else backend.values["port"]
    values = {
        **backend.values,
        "url": f"{cell.scheme}://{backend.values['host']}:{port}{cell.path}",
        "requests": str(profile.requests_for(cell)),
        "warmup": str(profile.warmup_requests),
        "server_workdir": backend.values["workdir"],
    }
    return subject.command(values)


def repetition_argv(context: RunContext, subject: AnySubject, cell: AnyCell) -> tuple[RunningServer, list[str]]:
    """The process whose CPU a repetition measures, and the command that makes the load."""
    profile = context.profile
    external, client = external_load(cell), client_load(cell)
    if external is not None and isinstance(subject, Server | Ceiling):
        server = context.started[subject.name].server
        return server, cell_argv(
            server,
            subject,
            external,
            requests=profile.requests_for(cell),
            settings=context.settings,
            address=context.address,
            seconds=profile.seconds,
        )
    if client is not None and isinstance(subject, Client):
        backend = _backend(context.started)
        return backend.server, client_argv(subject, client, backend, profile)
    raise BenchError(f"{context.recipe.recipe_path}: {subject.name} cannot run cell {cell.name} ({cell.tool})")
