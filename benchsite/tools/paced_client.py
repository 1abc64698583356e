"""benchsite-paced: an open-loop HTTP/1.1 load tool. Requests go out on a fixed schedule, whatever the
earlier ones are doing, and each one's latency counts from the moment it was meant to be sent.

A closed loop (ab, wrk) sends a client's next request only when the last one came back, so a server that
stops for 100 ms delays one request and the load with it. Here request i is due at start + i / rate; with
kept-alive connections it goes to connection i mod C (waiting there if that connection is still busy, as
wrk2 does), else on a new connection of its own (at most C open, the rest waiting in line). Either way a
stall is charged to every request it delayed. The report also says how late the tool itself sent (its
send lag, after a connection was free) and how busy it was (the share of the time it spent sending and
reading rather than waiting for the next due time): a late or saturated tool cannot hold the rate, and its
figures decide nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import NoReturn

import numpy as np

from benchsite.tools.paced_loop import VERSION, Paced, target_of

PERCENTILES = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0)
BUCKETS_PER_DECADE = 40  # the histogram's bucket edges, about 6 % apart
MAX_RATE = 1e6
MAX_CONNECTIONS = 20_000
# The most requests one run schedules: each answered one keeps its latency and send lag (16 bytes), so the tool
# holds at most about 160 MB whatever its rate and duration (requests not yet due, or due and waiting for a
# connection, are counted, never queued).
MAX_REQUESTS = 10_000_000


def histogram(latencies_us: np.ndarray) -> list[tuple[int, int]]:
    """(upper edge in µs, count) of the non-empty log-spaced buckets."""
    edges = np.unique(np.ceil(np.logspace(0, 9, 9 * BUCKETS_PER_DECADE + 1)).astype(np.int64))
    counts, _ = np.histogram(np.maximum(latencies_us, 1), bins=np.concatenate(([0], edges)))
    return [(int(edges[i]), int(count)) for i, count in enumerate(counts) if count]


def report(paced: Paced, rate: float, duration_s: float, connections: int, elapsed_s: float) -> str:
    tally = paced.tally
    latencies = np.frombuffer(tally.latencies_us, dtype=np.int64) if tally.latencies_us else np.zeros(0, np.int64)
    lags = np.frombuffer(tally.lags_us, dtype=np.int64) if tally.lags_us else np.zeros(1, np.int64)
    mode = "kept alive" if paced.keepalive else "one per request"
    lines = [
        VERSION,
        f"offered: {rate:.3f} req/s for {duration_s:.3f} s, {connections} connections, {mode}",
        f"scheduled: {paced.count}",
        f"completed: {len(latencies)}",
        f"errors: {tally.connect_errors} connect, {tally.read_errors} read, {tally.timeouts} timeout",
        f"non-2xx: {tally.non_2xx}",
        f"elapsed: {elapsed_s:.6f} s",
        f"achieved: {len(latencies) / elapsed_s:.3f} req/s",
        f"busy: {paced.busy_ns / 1e9 / elapsed_s:.3f} of the elapsed time",
    ]
    lag_at = np.percentile(lags, [50, 99, 100], method="inverted_cdf")
    lines.append(f"send lag us: p50 {int(lag_at[0])} p99 {int(lag_at[1])} max {int(lag_at[2])}")
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


def _within(high: float) -> Callable[[str], float]:
    """An argument's type: a finite number in (0, high], else its own one-line error."""

    def read(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and 0 < value <= high):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number in (0, {high:g}]")
        return value

    return read


def _connections(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_CONNECTIONS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to {MAX_CONNECTIONS:,}")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="benchsite-paced", description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--rate", type=_within(MAX_RATE), required=True, help="requests per second")
    parser.add_argument("--duration", type=_within(3600), required=True, help="seconds of schedule")
    parser.add_argument("--connections", type=_connections, default=10, help="kept-alive connections, or at most open")
    parser.add_argument("--keepalive", action="store_true", help="reuse connections (HTTP/1.1 keep-alive)")
    parser.add_argument("--timeout", type=_within(3600), default=30.0, help="seconds a request may take")
    parser.add_argument("--version", action="version", version=VERSION)
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
    paced = Paced(target, args.rate, args.duration, args.connections, args.keepalive, args.timeout)
    try:
        elapsed_s = paced.run()
    except KeyboardInterrupt:
        sys.stderr.write(f"benchsite-paced: interrupted after {paced.index:,} of {paced.count:,} requests fell due\n")
        return 130
    sys.stdout.write(report(paced, args.rate, args.duration, args.connections, elapsed_s))
    completed, failed = len(paced.tally.latencies_us), paced.tally.failed
    if completed == 0 or failed > completed:
        sys.stderr.write(
            f"benchsite-paced: {completed:,} of {paced.count:,} requests completed, {failed:,} failed: "
            f"{paced.tally.failed_said(target.shown)}\n"
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
