"""``elmo-bench migrate RESULTS_DIR...``: bring a results tree written by an older version of this project to what
the current one writes, once, where its data is readable. The two steps (each its own module, each a documented
rule of what older versions wrote; run identities themselves need no migration: elmo_bench.identity.history reads
the old forms):

- compact record files (``predictions_<split>.json.gz``, ``scores_test.json.gz``) for runs recorded before the
  engine wrote them (elmo_bench.engine.record_migration: each run's task reads its own test split);
- machine paths in records made relative (to the repository, else the run directory) or null, with a
  ``path_migration`` block naming each changed key (elmo_bench.records.path_migration).

Existing files are never rewritten but for those paths; a second run changes nothing. Prints one JSON object:
``written`` (compact files written) and ``notes`` (lines on stderr), ``files`` (records whose paths changed) and
``keys`` (the keys changed)."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Sequence

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.errors import ConfigError
from elmo_bench.records.path_migration import migrate_dirs


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="elmo-bench migrate", description=__doc__.splitlines()[0].strip("`: "))
    parser.add_argument("dirs", nargs="+", metavar="RESULTS_DIR", help="results trees (every record below them)")
    return parser


def migrate_main(argv: Sequence[str] | None = None) -> int:
    from elmo_bench.engine.record_migration import migrate  # lazy: torch (the tasks' readers and models)

    args = build_parser().parse_args(argv)
    missing = [d for d in args.dirs if not Path(d).is_dir()]
    if missing:
        raise ConfigError(f"{missing[0]}: not a directory (expected a results tree with results.json files)")
    notes = migrate(args.dirs)
    for note in notes:
        print(note, file=sys.stderr)
    done = migrate_dirs([Path(d) for d in args.dirs])
    keys = sorted({k for block in done.values() for k in [*block["rewritten"], *block["dropped"]]})
    print(json.dumps({"written": sum(": wrote " in n for n in notes), "notes": len(notes), "files": len(done),
                      "keys": keys}))
    return 0
