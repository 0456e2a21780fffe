"""The ``elmo-bench`` subcommands (main.py dispatches; each imports its machinery when called) and the Hydra
glue of run.py (resolvers, callbacks, the one-line error guard)."""
