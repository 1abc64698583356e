"""Where the time goes: instructions per request under callgrind, and py-spy flame graphs."""
