"""``OUT/suite.json`` of ``elmo-bench probe-suite``, shared by the commands that write into one ``OUT`` (issue 56
item 8): two suites run at once with different ``--probes`` each merge their probes into the record under
``OUT/.suite.json.lock`` (read, merge, write atomically, all under the lock), so neither loses the other's entry. A
record of another suite (another budget, encoder or overrides) is not merged into: one line, before any probe runs
when a probe of this command is new to ``OUT`` (a probe already there is refused by its own identity check first).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.atomic import atomic_write_text, held_lock
from elmo_bench.base.errors import ConfigError

SUITE_RECORD = "suite.json"
#: the file whose ``flock`` a writer of OUT/suite.json holds while it reads, merges and writes it
SUITE_LOCK = ".suite.json.lock"
#: the keys that say which suite a record is: two records merge only when they agree on each
SAME_SUITE = ("budget", "encoder", "random_init", "random_seed", "overrides")


def read_suite(out: Path) -> dict[str, Any] | None:
    """OUT/suite.json (None when absent); ConfigError (one line) for a directory, or a file this command did not
    write."""
    record = out / SUITE_RECORD
    if not record.exists() and not record.is_symlink():
        return None
    if record.is_dir():
        raise ConfigError(f"{record}: a directory, not a file; expected the suite record that elmo-bench probe-suite "
                          f"writes (move it away or choose another --out)")
    try:
        found = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        found = None
    if not isinstance(found, dict) or not isinstance(found.get("probes"), dict):
        raise ConfigError(f"{record}: not a suite record of elmo-bench probe-suite (truncated, or another "
                          f"program's); move it away or choose another --out")
    return found


def check_same_suite(out: Path, found: Mapping[str, Any], suite: Mapping[str, Any]) -> None:
    """ConfigError when the record ``found`` in OUT is of another suite than ``suite`` (SAME_SUITE), or of the form
    older versions wrote (bounds not per probe): merging would mix two configurations in one record."""
    differs = [key for key in SAME_SUITE if found.get(key) != suite.get(key)]
    bounds = found.get("bounds") or {}
    if not differs and not all(isinstance(value, dict) for value in bounds.values()):
        differs = ["bounds"]
    if differs:
        shown = "; ".join(f"{key}: {found.get(key)!r} there, {suite.get(key)!r} here" for key in differs[:3])
        raise ConfigError(f"{out / SUITE_RECORD}: the record of another suite ({shown}); its probes cannot be merged "
                          f"with this command's: choose another --out, or move {SUITE_RECORD} away")


def check_suite_before(out: Path, suite: Mapping[str, Any], new_probes: bool) -> None:
    """Before any probe runs: OUT/suite.json is readable, and, when ``new_probes`` (a probe of this command has
    no directory in OUT yet), of this suite."""
    found = read_suite(out)
    if found is not None and new_probes:
        check_same_suite(out, found, suite)


def write_suite(out: Path, record: dict[str, Any]) -> dict[str, Any]:
    """Merge ``record`` (this command's probes and bounds) into OUT/suite.json under its lock and write it
    atomically; returns the merged record (what the file now holds)."""
    out.mkdir(parents=True, exist_ok=True)
    with held_lock(out / SUITE_LOCK, str(out / SUITE_RECORD)):
        found = read_suite(out)
        if found is not None:
            check_same_suite(out, found, record)
            record = {**found, **record, "probes": {**found["probes"], **record["probes"]},
                      "bounds": {**(found.get("bounds") or {}), **record.get("bounds", {})}}
        atomic_write_text(out / SUITE_RECORD, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record
