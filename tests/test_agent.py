"""The agent a run starts on each host over SSH, here on this machine over pipes: while a request takes long it
says it is working, so the controller tells a slow operation from a link gone silent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchsite.harness.hosts.agent import HEARTBEAT
from conftest import REPO

pytestmark = pytest.mark.integration


def test_a_long_request_sends_working_lines_then_its_reply(tmp_path: Path) -> None:
    release = tmp_path / "release"
    agent = subprocess.Popen(
        [sys.executable, "-m", "benchsite.harness.hosts.agent", "--address", "127.0.0.1", "--idle-timeout", "1.2"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert agent.stdin is not None and agent.stdout is not None
    try:
        assert "ready" in json.loads(agent.stdout.readline())
        waits_for_release = ["sh", "-c", f"while [ ! -e {release} ]; do sleep 0.05; done"]
        request = {"id": 7, "op": "run_tool", "args": {"argv": waits_for_release, "cpu": None, "timeout_s": 30}}
        send(agent, request)
        lines = []
        while "ok" not in (line := json.loads(agent.stdout.readline())):
            lines.append(line)
            send(agent, {"op": HEARTBEAT})  # as the controller does while it waits: the link stays alive
            if len(lines) == 2:
                release.touch()  # the request ends once two working lines came, however slow the machine
        assert line["id"] == 7 and line["ok"]["exit_code"] == 0
        assert len(lines) >= 2 and all(each == {"id": 7, "working": True} for each in lines)  # one each 0.3 s
    finally:
        agent.stdin.close()  # the input ends: the agent stops what it started and exits
        assert agent.wait(timeout=30) == 0


def send(agent: subprocess.Popen[str], request: dict[str, object]) -> None:
    assert agent.stdin is not None
    agent.stdin.write(json.dumps(request) + "\n")
    agent.stdin.flush()
