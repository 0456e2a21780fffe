"""Run under torchrun by tests/test_cache_shards.py: ``elmo-bench extract`` three times in one launch (one process
group): first with ranks that disagree (``--shard-sentences 2+rank``, into ``<cache>-bad``), which must end with exit
2 on every rank, then the given command as is, then the same command again over the entry it finished (which must
say it found it done). Prints ``disagree <code>`` and exits with the last two commands' worst code."""
from __future__ import annotations

import os
import sys

from elmo_bench.commands.main import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    cache = argv[argv.index("--cache-dir") + 1]
    bad = [a if a != cache else f"{cache}-bad" for a in argv] + ["--shard-sentences", str(2 + int(os.environ["RANK"]))]
    print(f"disagree {main(bad)}", flush=True)
    first = main(argv)
    sys.exit(max(first, main(argv)))
