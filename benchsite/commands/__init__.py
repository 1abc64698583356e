"""The command layer: what each `invoke` task does, beyond parsing its options (tasks.py) and below printing.

One module per command that needs more than a call: `recipe` (a session of runs: sweeps, leftovers,
interrupts and the exit policy), `compare`, and `terminal` (the tables and lines a command prints).
"""
