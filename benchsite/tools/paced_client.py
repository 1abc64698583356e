"""benchsite-paced: an open-loop HTTP/1.1 load tool. Requests go out on a fixed schedule, whatever the
earlier ones are doing, and each one's latency counts from the moment it was meant to be sent.

A closed loop (ab, wrk) sends a client's next request only when the last one came back, so a server that
stops for 100 ms delays one request and the load with it. Here request i is due at start + i / rate and goes out
on an idle kept-alive connection or a new one, at most C open; when all C are busy it waits in line. Either way
a stall is charged to every request it delayed. The report says how late the tool itself sent (its send lag,
from each request's due time: a wait for one of its own connections is the tool's, not the server's), how much
CPU it used over the run (waits in the kernel included), how many connections it needed, and how often the
machine's listen queues overflowed meanwhile: a late or saturated tool cannot hold the rate, and its figures
decide nothing.

Two engines, one report: benchsite-paced runs the C loop (`_pacer.c`), which keeps a schedule of 40,000
requests a second on one CPU; benchsite-witness runs the Python loop (`paced_loop.py`), a second implementation
that measures the same server at a low rate beside it.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np
import psutil

from benchsite.tools.paced_loop import Paced, Schedule, Target, target_of
from benchsite.tools.paced_witness import (
    Witness,
    WitnessError,
    announce_ready,
    back_to_ordinary,
    scheduling,
    to_real_time,
    usable_cpu,
)

PACED = "benchsite-paced 6"
WITNESS = "benchsite-witness 2"
PERCENTILES = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0)
BUCKETS_PER_DECADE = 40  # the histogram's bucket edges, about 6 % apart
# The highest rate each engine is proven to hold on the project's 2-CPU VM (docs/methodology.rst, "The open-loop
# tool's ceiling"): beyond it a rate is refused, not measured.
MAX_RATE = {PACED: 60_000.0, WITNESS: 2_000.0}
MAX_CONNECTIONS = 20_000
# The most requests one run schedules: each answered one keeps its latency and send lag (16 bytes), so the tool
# holds at most about 160 MB whatever its rate and duration.
MAX_REQUESTS = 10_000_000
NETSTAT = Path("/proc/net/netstat")


@dataclass(frozen=True)
class Outcome:
    """What one engine's run counted."""

    latencies_us: np.ndarray
    lags_us: np.ndarray
    own_lags_us: np.ndarray  # each sent request's lag from when it could first have gone: the loop's own
    scheduled: int
    counts: dict[str, int]  # connect_errors, closed, cut_short, not_http, timeouts, non_2xx
    elapsed_s: float
    cpu_s: float
    peak_open: int
    stamped: int | None = None  # replies the kernel stamped on arrival (the C loop): they came free then, not when read

    @property
    def read_errors(self) -> int:
        return self.counts["closed"] + self.counts["cut_short"] + self.counts["not_http"]

    @property
    def failed(self) -> int:
        return self.counts["connect_errors"] + self.read_errors + self.counts["timeouts"]

    def failed_said(self, address: str) -> str:
        """The failures in words, the most frequent first."""
        kinds = [
            (self.counts["connect_errors"], f"could not connect to {address} (nothing listening?)"),
            (self.counts["closed"], "closed by the server before any reply"),
            (self.counts["cut_short"], "cut short within the reply"),
            (self.counts["not_http"], "answered with something that is not HTTP"),
            (self.counts["timeouts"], "not answered within the timeout"),
        ]
        return "; ".join(f"{count:,} {what}" for count, what in sorted(kinds, key=lambda kind: -kind[0]) if count)


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_c(target: Target, schedule: Schedule) -> Outcome:
    """The C loop (the GIL released while it runs)."""
    from benchsite.tools import _pacer  # built by pip from _pacer.c

    host, port = target.address[0], target.address[1]
    began = _cpu_s()
    got = _pacer.run(
        family=int(target.family),
        host=host,
        port=port,
        request=schedule.request,
        rate=schedule.rate,
        count=schedule.count,
        connections=schedule.connections,
        keepalive=schedule.keepalive,
        timeout_s=schedule.timeout_s,
    )
    if "stamped" not in got:
        raise SystemExit(f"{PACED}: its C loop was built from an older _pacer.c: run .venv/bin/pip install -e .")
    counts = {name: got[name] for name in ("connect_errors", "closed", "cut_short", "not_http", "timeouts", "non_2xx")}
    return Outcome(
        latencies_us=np.frombuffer(got["latencies_us"], dtype=np.int64),
        lags_us=np.frombuffer(got["lags_us"], dtype=np.int64),
        own_lags_us=np.frombuffer(got["own_lags_us"], dtype=np.int64),
        scheduled=got["scheduled"],
        counts=counts,
        elapsed_s=got["elapsed_ns"] / 1e9,
        cpu_s=_cpu_s() - began,
        peak_open=got["peak_open"],
        stamped=got["stamped"],
    )


def run_python(target: Target, schedule: Schedule) -> Outcome:
    """The Python loop."""
    paced = Paced(target, schedule)
    began = _cpu_s()
    elapsed_s = paced.run()
    tally = paced.tally
    counts = {
        "connect_errors": tally.connect_errors,
        "closed": tally.closed,
        "cut_short": tally.cut_short,
        "not_http": tally.not_http,
        "timeouts": tally.timeouts,
        "non_2xx": tally.non_2xx,
    }
    return Outcome(
        latencies_us=np.frombuffer(tally.latencies_us, dtype=np.int64) if tally.latencies_us else np.zeros(0, np.int64),
        lags_us=np.frombuffer(tally.lags_us, dtype=np.int64) if tally.lags_us else np.zeros(0, np.int64),
        own_lags_us=np.frombuffer(tally.own_lags_us, dtype=np.int64) if tally.own_lags_us else np.zeros(0, np.int64),
        scheduled=paced.count,
        counts=counts,
        elapsed_s=elapsed_s,
        cpu_s=_cpu_s() - began,
        peak_open=paced.peak_open,
    )


def listen_overflows() -> int | None:
    """This machine's count of connections its listen queues turned away (TcpExt ListenOverflows), None where the
    kernel does not say."""
    try:
        lines = [line.split() for line in NETSTAT.read_text().splitlines() if line.startswith("TcpExt:")]
        return int(dict(zip(lines[0], lines[1], strict=True))["ListenOverflows"])
    except (OSError, IndexError, KeyError, ValueError):
        return None


def process_age_s() -> float:
    """Seconds since this process was created (the harness's clock around it starts at the fork), by the kernel's
    boot clock: its start is counted in ticks since boot."""
    since_boot = psutil.Process().create_time() - psutil.boot_time()
    return time.clock_gettime(time.CLOCK_BOOTTIME) - since_boot


def histogram(latencies_us: np.ndarray) -> list[tuple[int, int]]:
    """(upper edge in µs, count) of the non-empty log-spaced buckets."""
    edges = np.unique(np.ceil(np.logspace(0, 9, 9 * BUCKETS_PER_DECADE + 1)).astype(np.int64))
    counts, _ = np.histogram(np.maximum(latencies_us, 1), bins=np.concatenate(([0], edges)))
    return [(int(edges[i]), int(count)) for i, count in enumerate(counts) if count]


def report(version: str, outcome: Outcome, args: argparse.Namespace, overflows: int | None, scheduled: str) -> str:
    latencies, lags, counts = outcome.latencies_us, outcome.lags_us, outcome.counts
    mode = "kept alive" if args.keepalive else "one per request"
    lines = [
        version,
        f"offered: {args.rate:.3f} req/s for {args.duration:.3f} s, at most {args.connections} connections, {mode}",
        f"scheduled: {outcome.scheduled}",
        f"sent: {len(lags)}",
        f"completed: {len(latencies)}",
        f"errors: {counts['connect_errors']} connect, {outcome.read_errors} read, {counts['timeouts']} timeout",
        f"non-2xx: {counts['non_2xx']}",
        f"elapsed: {outcome.elapsed_s:.6f} s",
        f"achieved: {len(latencies) / outcome.elapsed_s:.3f} req/s",
        f"cpu: {outcome.cpu_s / outcome.elapsed_s:.3f} of the elapsed time",
        f"peak open: {outcome.peak_open} connections",
        f"listen overflows: {'unknown' if overflows is None else overflows} (this machine's, over the run)",
        f"scheduling: {scheduled}",
    ]
    for name, found in (("send lag", lags), ("own lag", outcome.own_lags_us)):
        lag_at = np.percentile(found if len(found) else np.zeros(1), [50, 99, 100], method="inverted_cdf")
        lines.append(f"{name} us: p50 {int(lag_at[0])} p99 {int(lag_at[1])} max {int(lag_at[2])}")
    if outcome.stamped is not None:
        lines.append(f"stamped: {outcome.stamped} of {len(latencies)} replies on arrival")
    if len(latencies):
        lines.append(f"latency us: min {int(latencies.min())} mean {latencies.mean():.1f} max {int(latencies.max())}")
        at = np.percentile(latencies, PERCENTILES, method="inverted_cdf")
        lines += [f"percentile us: {p:g} {int(value)}" for p, value in zip(PERCENTILES, at, strict=True)]
        lines += [f"bucket us: {upper} {count}" for upper, count in histogram(latencies)]
    return "\n".join(lines) + "\n"


class _Parser(argparse.ArgumentParser):
    """argparse, its errors in one line (no usage block above them)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def _within(high: float, beyond: str = "") -> Callable[[str], float]:
    """An argument's type: a finite number in (0, high], else its own one-line error (`beyond`: why high)."""

    def read(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and 0 < value <= high):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number in (0, {high:g}]{beyond}")
        return value

    return read


def _connections(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_CONNECTIONS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to {MAX_CONNECTIONS:,}")
    return int(text)


def _cpu(text: str) -> int:
    try:
        return usable_cpu(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _request(target: Target, version: str, keepalive: bool) -> bytes:
    close = "" if keepalive else "Connection: close\r\n"
    agent = version.replace(" ", "/")
    return (
        f"GET {target.path} HTTP/1.1\r\nHost: {target.netloc}\r\nUser-Agent: {agent}\r\nAccept: */*\r\n{close}\r\n"
    ).encode()


def main(argv: list[str] | None = None, version: str = PACED) -> int:
    prog = version.split()[0]
    parser = _Parser(prog=prog, description=__doc__.splitlines()[0])
    ceiling = f": {prog}'s proven ceiling on the project's VM is {MAX_RATE[version]:,.0f} req/s"
    parser.add_argument("url")
    parser.add_argument("--rate", type=_within(MAX_RATE[version], ceiling), required=True, help="requests per second")
    parser.add_argument("--duration", type=_within(3600), required=True, help="seconds of schedule")
    parser.add_argument("--connections", type=_connections, default=10, help="the most connections open at once")
    parser.add_argument("--keepalive", action="store_true", help="reuse connections (HTTP/1.1 keep-alive)")
    parser.add_argument("--timeout", type=_within(3600), default=30.0, help="seconds a request may take")
    if version == PACED:
        parser.add_argument("--witness", type=_within(MAX_RATE[WITNESS]), help="the witness's rate (req/s)")
        parser.add_argument("--witness-cpu", type=_cpu, help="the CPU the witness runs on (the server's)")
    parser.add_argument("--version", action="version", version=version)
    args = parser.parse_args(argv)
    requests = args.rate * args.duration
    if not 1 <= round(requests) <= MAX_REQUESTS:
        parser.error(
            f"--rate {args.rate:g} for --duration {args.duration:g} schedules {requests:,.3g} requests: "
            f"schedule from 1 to {MAX_REQUESTS:,}"
        )
    try:
        target = target_of(args.url)
    except ValueError as error:
        parser.error(str(error))
    engine = run_c if version == PACED else run_python
    count = max(1, round(requests))
    try:
        witness = _witness(args) if version == PACED and args.witness else None
    except WitnessError as error:
        parser.error(str(error))
    before = listen_overflows()
    began = time.monotonic()
    if version == WITNESS:
        to_real_time()
    scheduled = scheduling()
    if version == WITNESS:
        announce_ready()
    try:
        request = _request(target, version, args.keepalive)
        schedule = Schedule(
            request=request,
            count=count,
            rate=args.rate,
            connections=args.connections,
            keepalive=args.keepalive,
            timeout_s=args.timeout,
        )
        before_schedule_s = process_age_s()
        outcome = engine(target, schedule)
        ended = time.monotonic()
    except OSError as error:  # the kernel refused the loop what it needs (epoll_pwait2 came with Linux 5.11)
        sys.stderr.write(
            f"{prog}: the system refused its event loop ({error.strerror}): it needs Linux 5.11 or newer\n"
        )
        return 2
    except KeyboardInterrupt:
        if witness is not None:
            witness.process.kill()
        sys.stderr.write(f"{prog}: interrupted after {time.monotonic() - began:.1f} s of its {args.duration:g} s\n")
        return 130
    back_to_ordinary()
    after = listen_overflows()
    overflows = None if before is None or after is None else after - before
    sys.stdout.write(report(version=version, outcome=outcome, args=args, overflows=overflows, scheduled=scheduled))
    if witness is not None:
        sys.stdout.write(witness.report(args.timeout + 10))
    if version == PACED:  # what the harness's clock around this process holds beside the schedule
        after_schedule_s = time.monotonic() - ended
        sys.stdout.write(f"outside schedule: before {before_schedule_s:.3f} s, after {after_schedule_s:.3f} s\n")
    completed, failed = len(outcome.latencies_us), outcome.failed
    if completed == 0 or failed > completed:
        sys.stderr.write(
            f"{prog}: {completed:,} of {count:,} requests completed, {failed:,} failed: "
            f"{outcome.failed_said(target.shown)}\n"
        )
        return 1
    return 0


def _witness(args: argparse.Namespace) -> Witness:
    """The witness started on the same URL for the same time, at its own low rate."""
    argv = ["--rate", str(args.witness), "--duration", str(args.duration), "--connections", "64"]
    argv += ["--timeout", str(args.timeout), *(["--keepalive"] if args.keepalive else []), args.url]
    return Witness(argv, args.witness_cpu)


def witness_main(argv: list[str] | None = None) -> int:
    """benchsite-witness: the same command, run by the Python loop."""
    return main(argv, WITNESS)


def _leave(code: int) -> NoReturn:
    """Exit the moment the report is out: the interpreter's teardown (numpy's modules, the collector) takes 0.01 s
    on a quiet machine and 0.3 s beside eight busy processes, time the harness's clock counts and no report can."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _interrupted(prog: str) -> int:
    sys.stderr.write(f"{prog}: interrupted\n")
    return 130


def paced_command() -> NoReturn:
    """The benchsite-paced program (started by benchsite/launch.py)."""
    try:
        code = main()
    except KeyboardInterrupt:  # outside its schedule, which says how far it came
        code = _interrupted(PACED.split()[0])
    _leave(code)


def witness_command() -> NoReturn:
    """The benchsite-witness program (started by benchsite/launch.py)."""
    try:
        code = witness_main()
    except KeyboardInterrupt:
        code = _interrupted(WITNESS.split()[0])
    _leave(code)


if __name__ == "__main__":
    paced_command()
