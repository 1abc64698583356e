"""A CPU hog of random duty for checking the suite on a busy machine: busy a random 30-60 % of each second,
on one CPU or the other in turn, at normal priority, until stopped (SIGTERM or Ctrl-C).

    python tests/random_hog.py [--seed N] &    then `.venv/bin/invoke test`, then kill it
"""

from __future__ import annotations

import argparse
import os
import random
import time


def hog(rng: random.Random, cpus: list[int]) -> None:
    """Each second: pick a CPU and a duty, spin that share of the second on it, sleep the rest."""
    while True:
        os.sched_setaffinity(0, {rng.choice(cpus)})
        second = time.monotonic()
        busy_until = second + rng.uniform(0.3, 0.6)
        while time.monotonic() < busy_until:
            pass
        time.sleep(max(0.0, second + 1.0 - time.monotonic()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None)
    hog(random.Random(parser.parse_args().seed), sorted(os.sched_getaffinity(0)))
