"""What every floor of the harness above borrows: the machine's environment and CPU times, HTTP probes, a
progress reporter, a subject's templates and imports, the project's files as a host needs them."""
