"""The run engine: check, start, verify, warm up, measure in rounds, record (runner, measure, record, start...)."""
