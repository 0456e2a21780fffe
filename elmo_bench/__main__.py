"""`python -m elmo_bench` is the same as the `elmo-bench` console script."""
from elmo_bench.commands.main import main

if __name__ == "__main__":
    raise SystemExit(main())  # the exit code, as the console script gives it
