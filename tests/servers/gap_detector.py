"""Pinned to one CPU at ordinary priority, read the clock in a loop until SIGTERM; then print the longest gap
between two readings in ms: the longest time something else held the CPU from it.

Usage: python gap_detector.py CPU
"""

from __future__ import annotations

import os
import signal
import sys
import time

os.sched_setaffinity(0, {int(sys.argv[1])})
stopped = False


def stop(_signum: int, _frame: object) -> None:
    global stopped
    stopped = True


signal.signal(signal.SIGTERM, stop)
print("measuring", flush=True)
longest, last = 0, time.perf_counter_ns()
while not stopped:
    now = time.perf_counter_ns()
    longest, last = max(longest, now - last), now
print(f"longest gap ms: {longest / 1e6:.3f}", flush=True)
