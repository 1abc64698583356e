"""The run engine: a run's phases over its session (runner), the timed and further rounds (measure), the
latency profile, the checks before anything starts (preflight), the time budget and the stored record."""
