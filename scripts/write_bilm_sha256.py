"""Write ``weights.sha256`` (options.json, weights.hdf5, vocab.txt) into a biLM directory; load_bilm checks it.

    python scripts/write_bilm_sha256.py elmo_bench/resources/bilm
"""
from __future__ import annotations

import sys
from pathlib import Path

from elmo_bench.bilm.checksums import write_checksums


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python scripts/write_bilm_sha256.py MODEL_DIR", file=sys.stderr)
        return 2
    record = write_checksums(Path(argv[0]))
    print(record.read_text(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
