"""What else the machine does: the quiet check before a run, steal and others' busy time during it."""
