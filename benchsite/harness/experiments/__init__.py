"""Benchmarks of the method itself: faults, the interference rule, A/B power, the harness overhead."""
