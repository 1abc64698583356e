"""One run's session: its context, its servers started and stopped, a load's command line, one repetition
measured, and the memory readings kept beside it. The engine's phases and the profilers share it."""
