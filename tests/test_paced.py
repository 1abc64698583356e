"""benchsite-paced, the open-loop load tool: its report parsed as printed (a real report recorded here, against a
cheroot app that stalls 100 ms once a second), its cell's command, its refusals."""

from __future__ import annotations

import re

import pytest

from benchsite.tools import parse_report
from benchsite.tools.paced import (
    BUSY_LIMIT,
    CPU_LIMIT,
    LAG_LIMIT_US,
    LAG_SHARE,
    OUTSIDE_BEFORE_VERSION_4_S,
    PacedCell,
    PacedParseError,
    parse_paced_output,
)
from benchsite.tools.paced_client import main
from conftest import FIXTURES, REPO

STALL = (FIXTURES / "paced" / "cheroot-stall-500rps.txt").read_text()


def printed(name: str) -> str:
    found = re.search(rf"^{re.escape(name)}: (.+)$", STALL, re.M)
    assert found is not None
    return found.group(1)


def test_reads_every_figure_as_the_report_prints_it() -> None:
    result = parse_paced_output(STALL)
    assert (result.offered_rps, result.schedule_s, result.connections, result.kept_alive) == (500.0, 2.0, 10, False)
    assert (result.scheduled, result.completed) == (int(printed("scheduled")), int(printed("completed")))
    assert result.requests_per_s == float(printed("achieved").removesuffix(" req/s"))
    assert result.elapsed_s == float(printed("elapsed").removesuffix(" s"))
    lines = dict(re.findall(r"^percentile us: (\S+) (\d+)$", STALL, re.M))
    assert dict(result.latency_us) == {float(p): int(us) for p, us in lines.items()}
    assert result.latency_at_us(99.0) == int(lines["99"]) and result.latency_at_us(99.9) == int(lines["99.9"])
    assert result.percentiles_ms == tuple((int(p), int(us) / 1000) for p, us in lines.items() if "." not in p)
    assert result.failed_requests == 0 and result.non_2xx_responses == 0
    assert result.send_lag_us_p99 <= LAG_LIMIT_US and not result.tool_limited
    assert type(result).from_json(result.to_json(), "stored") == result
    assert parse_report("paced", STALL) == result


def test_a_stall_shows_in_the_tail_and_not_in_the_median() -> None:
    result = parse_paced_output(STALL)
    assert result.latency_at_us(50.0) < 1000 <= 50_000 <= result.latency_at_us(99.0)  # type: ignore[operator]


def test_a_tool_that_fell_behind_its_schedule_or_was_saturated_says_so() -> None:
    late = STALL.replace(printed("send lag us"), f"p50 20 p99 {LAG_LIMIT_US + 1} max 9000")
    assert parse_paced_output(late).tool_limited
    busy = STALL.replace(printed("busy"), f"{BUSY_LIMIT:.3f} of the elapsed time")
    assert parse_paced_output(busy).busy_share == BUSY_LIMIT and parse_paced_output(busy).tool_limited


@pytest.mark.parametrize(
    ("cut", "said"),
    [
        ("benchsite-paced 1\n", "no version line"),
        ("errors:", "no 'errors:' line"),
        ("send lag us:", "no 'send lag us:' line"),
        ("busy:", "no 'busy:' line"),
    ],
)
def test_a_report_without_one_of_its_lines_names_it(cut: str, said: str) -> None:
    broken = "\n".join(line for line in STALL.splitlines() if not line.startswith(cut.strip()))
    with pytest.raises(PacedParseError, match=said):
        parse_paced_output(broken)


def test_a_histogram_that_does_not_add_up_to_the_answered_requests_is_refused() -> None:
    cut = "\n".join(STALL.splitlines()[:-1])  # the last bucket lost: a report cut short
    with pytest.raises(PacedParseError, match="histogram holds"):
        parse_paced_output(cut)


def test_the_cell_command_is_bounded_by_its_schedule_and_the_socket_timeout() -> None:
    cell = PacedCell(name="p", label="p", rate=1234.5, seconds=3, connections=10, keepalive=True)
    argv = cell.argv("http://127.0.0.1:8080/", 0, "benchsite-paced", 30)
    assert argv == [
        "benchsite-paced",
        *("--rate", "1234.500", "--duration", "3", "--connections", "10", "--keepalive", "--timeout", "30"),
        "http://127.0.0.1:8080/",
    ]


@pytest.mark.parametrize("rate", ["0", "-5", "fast", "nan", "60001", "2e6"])
def test_a_rate_it_cannot_send_is_refused_before_anything_is_sent(
    rate: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["--rate", rate, "--duration", "1", "http://127.0.0.1:9/"])
    said = capsys.readouterr().err.strip().splitlines()
    assert ended.value.code == 2 and "--rate" in said[-1] and "Traceback" not in "\n".join(said)


def test_the_methodology_states_the_limits_the_figures_apply() -> None:
    said = " ".join((REPO / "docs" / "methodology.rst").read_text().split())
    assert f"percentile of own lag is over {LAG_LIMIT_US / 1000:g} ms and over a tenth of the p99" in said
    assert f"or the CPU reached {100 * CPU_LIMIT:.0f} %, the load is flagged" in said and LAG_SHARE == 0.1


WITNESSED = (FIXTURES / "paced" / "nginx-witnessed.txt").read_text()


def test_version_2_reads_what_the_tool_says_of_itself_and_its_witness() -> None:
    result = parse_paced_output(WITNESSED)
    main = "".join(line for line in WITNESSED.splitlines(keepends=True) if not line.startswith("witness "))
    for name, value in (
        ("sent", result.sent),
        ("scheduled", result.scheduled),
        ("completed", result.completed),
    ):
        assert re.search(rf"^{name}: {value}$", main, re.M), name
    assert f"cpu: {result.cpu_share:.3f} of the elapsed time" in main
    assert f"peak open: {result.peak_open} connections" in main
    assert f"listen overflows: {result.listen_overflows} (this machine's, over the run)" in main
    assert result.busy_share is None and result.scheduling == "ordinary on CPU 1"
    witness = result.witness
    assert witness is not None and witness.scheduling is not None and witness.witness is None
    printed_p99 = re.search(r"^witness percentile us: 99 (\d+)$", WITNESSED, re.M)
    assert printed_p99 is not None and witness.latency_at_us(99.0) == int(printed_p99.group(1))
    assert witness.offered_rps < result.offered_rps and witness.scheduled < result.scheduled
    assert type(result).from_json(result.to_json(), "stored") == result


def test_version_2_counts_the_tool_behind_on_lag_cpu_or_a_request_never_sent() -> None:
    result = parse_paced_output(WITNESSED)
    assert not result.tool_limited
    main = [line for line in WITNESSED.splitlines() if not line.startswith("witness ")]
    cpu = next(line for line in main if line.startswith("cpu: "))
    saturated = WITNESSED.replace(cpu + "\n", f"cpu: {CPU_LIMIT:.3f} of the elapsed time\n", 1)
    assert parse_paced_output(saturated).tool_limited
    sent = next(line for line in main if line.startswith("sent: "))
    unsent = WITNESSED.replace(sent + "\n", f"sent: {result.scheduled - 1}\n", 1)
    assert parse_paced_output(unsent).tool_limited
    lag = next(line for line in main if line.startswith("send lag us: "))
    late = WITNESSED.replace(lag + "\n", f"send lag us: p50 20 p99 {LAG_LIMIT_US + 1} max 9000\n", 1)
    assert parse_paced_output(late).tool_limited


def test_a_witness_that_gave_no_report_is_said_and_the_tool_is_still_read() -> None:
    main = "".join(line for line in WITNESSED.splitlines(keepends=True) if not line.startswith("witness "))
    result = parse_paced_output(main + "witness failed: exit code 1: 0 of 600 requests completed\n")
    assert result.witness is None and result.witness_error == "exit code 1: 0 of 600 requests completed"
    assert result.completed == parse_paced_output(WITNESSED).completed


@pytest.mark.parametrize("cut", ["sent:", "cpu:", "peak open:", "listen overflows:", "scheduling:"])
def test_a_version_2_report_without_one_of_its_lines_names_it(cut: str) -> None:
    broken = "".join(line for line in WITNESSED.splitlines(keepends=True) if not line.startswith(cut))
    with pytest.raises(PacedParseError, match=f"no '{cut}' line"):
        parse_paced_output(broken)


# Recorded 2026-11-28 on the project's VM: benchsite-paced 4 at 200 req/s for 2 s on CPU 1, its witness at 20 req/s on
# CPU 0, against Python's http.server serving one small file from CPU 0.
OUTSIDE = (FIXTURES / "paced" / "http-server-witnessed-v4.txt").read_text()


def test_version_4_says_how_long_its_process_ran_outside_its_schedule() -> None:
    result = parse_paced_output(OUTSIDE)
    found = re.search(r"^outside schedule: before (\S+) s, after (\S+) s$", OUTSIDE, re.M)
    assert found is not None and not found.group(0).startswith("witness ")
    assert (result.before_schedule_s, result.after_schedule_s) == (float(found.group(1)), float(found.group(2)))
    assert result.outside_measurement_s == float(found.group(1)) + float(found.group(2))
    assert result.witness is not None and result.witness.before_schedule_s is None  # the witness does not say it
    assert parse_paced_output(WITNESSED).outside_measurement_s == OUTSIDE_BEFORE_VERSION_4_S  # version 2: assumed
    assert type(result).from_json(result.to_json(), "stored") == result


def test_a_version_4_report_without_its_outside_line_names_it() -> None:
    broken = "".join(line for line in OUTSIDE.splitlines(keepends=True) if not line.startswith("outside schedule:"))
    with pytest.raises(PacedParseError, match="no 'outside schedule:' line"):
        parse_paced_output(broken)


# Recorded 2026-11-29 on the project's VM: benchsite-paced 5 at 200 req/s for 2 s on CPU 1, its witness at 20 req/s on
# CPU 0, against Python's http.server serving one small file from CPU 0.
OWN = (FIXTURES / "paced" / "http-server-witnessed-v5.txt").read_text()
# Recorded 2026-11-29: benchsite-paced 5 at 300 req/s over ONE connection for 2 s on CPU 1 against tests/servers/
# held_app.py --delay 0.005 (about 180 req/s) on CPU 0: each request waited for the server to answer the one before.
WAITING = (FIXTURES / "paced" / "held-app-one-connection-v5.txt").read_text()


def lag_line(report: str, name: str) -> tuple[int, int, int]:
    found = re.search(rf"^{name} us: p50 (\d+) p99 (\d+) max (\d+)$", report, re.M)
    assert found is not None
    return int(found.group(1)), int(found.group(2)), int(found.group(3))


def test_version_5_reads_the_tools_own_lag_apart_from_its_send_lag() -> None:
    result = parse_paced_output(OWN)
    _, p99, most = lag_line(OWN, "own lag")
    assert (result.own_lag_us_p99, result.own_lag_us_max) == (p99, most) and not result.tool_limited
    assert result.witness is not None and result.witness.own_lag_us_p99 == lag_line(OWN, "witness own lag")[1]
    assert type(result).from_json(result.to_json(), "stored") == result
    broken = "".join(line for line in OWN.splitlines(keepends=True) if not line.startswith("own lag us:"))
    with pytest.raises(PacedParseError, match="no 'own lag us:' line"):
        parse_paced_output(broken)


def test_a_wait_for_the_server_is_its_latency_and_not_the_tools_lag() -> None:
    """Over one connection, each request waited for the server's reply to the one before: its send lag is seconds,
    its own lag nothing. Version 4's rule (send lag over 1 ms) made this load the tool's; it is the server's."""
    result = parse_paced_output(WAITING)
    send_p99, own_p99 = lag_line(WAITING, "send lag")[1], lag_line(WAITING, "own lag")[1]
    assert send_p99 > 1_000_000 and own_p99 <= LAG_LIMIT_US
    assert result.send_lag_us_p99 == send_p99 and not result.tool_limited
    assert result.latency_at_us(99.0) >= send_p99  # the wait is in the latency, counted from each due time


def test_the_own_lag_limit_is_a_share_of_the_tail_it_would_move() -> None:
    """1 ms of own lag flags a load whose p99 is 10 ms; beside a p99 of 1.5 s it cannot move the tail."""
    p99 = parse_paced_output(OWN).latency_at_us(99.0)
    assert p99 is not None and p99 < LAG_LIMIT_US / LAG_SHARE * 1.1
    own = "own lag us: p50 {} p99 {} max {}".format(*lag_line(OWN, "own lag"))
    late = OWN.replace(own, f"own lag us: p50 20 p99 {int(max(LAG_LIMIT_US, LAG_SHARE * p99)) + 1} max 9000", 1)
    assert parse_paced_output(late).tool_limited
    waited = "own lag us: p50 {} p99 {} max {}".format(*lag_line(WAITING, "own lag"))
    slow = parse_paced_output(WAITING.replace(waited, "own lag us: p50 20 p99 2000 max 9000", 1))
    assert not slow.tool_limited  # 2 ms beside a tail of about 1.5 s
    bound = slow.at_least_us(99.0)
    assert bound == slow.latency_at_us(99.0) - 9000  # what the server surely took: less the largest own lag
