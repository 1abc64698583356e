"""Processes the harness starts: lifecycles pinned to CPUs, the guardian, signals, CPU time per thread."""
