"""What else the machine does: the quiet check before a run (the CPU times it reads are in basics)."""
