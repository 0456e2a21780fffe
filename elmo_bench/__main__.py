"""`python -m elmo_bench` is the same as the `elmo-bench` console script, exit code included."""
import sys

from elmo_bench.commands.main import main

if __name__ == "__main__":
    sys.exit(main())
