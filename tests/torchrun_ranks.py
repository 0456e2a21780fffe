"""Run under torchrun by tests/test_cache_shards.py: ``elmo-bench extract`` twice in one launch (one process group):
first with ranks that disagree (``--shard-sentences 2+rank``, into ``<cache>-bad``), which must end with exit 2 on
every rank, then the given command as is. Prints ``disagree <code>`` and exits with the second command's code."""
from __future__ import annotations

import os
import sys

from elmo_bench.commands.main import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    cache = argv[argv.index("--cache-dir") + 1]
    bad = [a if a != cache else f"{cache}-bad" for a in argv] + ["--shard-sentences", str(2 + int(os.environ["RANK"]))]
    print(f"disagree {main(bad)}", flush=True)
    sys.exit(main(argv))
