"""The agent a run starts on each host over SSH, here on this machine over pipes: while a request takes long it
says it is working, so the controller tells a slow operation from a link gone silent."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO

pytestmark = pytest.mark.integration


def test_a_long_request_sends_working_lines_then_its_reply() -> None:
    agent = subprocess.Popen(
        [sys.executable, "-m", "benchsite.harness.agent", "--address", "127.0.0.1", "--idle-timeout", "1.2"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert agent.stdin is not None and agent.stdout is not None
    try:
        assert "ready" in json.loads(agent.stdout.readline())
        request = {"id": 7, "op": "run_tool", "args": {"argv": ["sleep", "0.8"], "cpu": None, "timeout_s": 10}}
        agent.stdin.write(json.dumps(request) + "\n")
        agent.stdin.flush()
        lines = []
        while "ok" not in (line := json.loads(agent.stdout.readline())):
            lines.append(line)
        assert line["id"] == 7 and line["ok"]["exit_code"] == 0
        assert len(lines) >= 2 and all(each == {"id": 7, "working": True} for each in lines)  # one each 0.3 s
    finally:
        agent.stdin.close()  # the input ends: the agent stops what it started and exits
        assert agent.wait(timeout=30) == 0
