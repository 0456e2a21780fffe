"""Step two of ``elmo-bench migrate DIR...`` (elmo_bench.commands.migrate): rewrites every absolute machine path in the committed probe
records (``*.json`` under each DIR, e.g. docs/results/probe_suite and docs/results/probes_controls) to a path
relative to the repository, and never changes any other value (numbers, names, hashes stay byte-identical).

The rules, for a string that is an absolute path:

- under some checkout's ``elmo_bench/`` or ``.cache/`` (``/work/<checkout>/elmo_bench/resources/bilm/options.json``)
  → repository-relative (``elmo_bench/resources/bilm/options.json``);
- under the shared data beside the checkouts (``/work/shared/data/X``) → ``../shared/data/X`` (relative to the
  repository, as the probe runs record it: elmo_bench.engine.probe_run.portable);
- a run's output directory (the key ``out``) → ``.``: the record's own directory, where it was copied to;
- anything else (a machine-local model copy, cache or output under ``/tmp``) → null, with a note naming the key and
  the path's last component.

Each rewritten file gets a top-level ``path_migration`` block listing the rewritten and dropped keys (dotted) and a
note; a file with no absolute path is left untouched, and running the step twice changes nothing.
"""
from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

#: a checkout's own folders: a path through one of them is made relative to the repository
CHECKOUT_DIRS = ("elmo_bench", ".cache")
#: the shared folder beside the checkouts (``/work/shared``): ``../shared/...`` from the repository
SHARED = "shared"
OUT_KEYS = ("out",)
BLOCK = "path_migration"
NOTE = ("absolute machine paths rewritten by elmo_bench/records/path_migration.py: repository-relative for a "
        "checkout's elmo_bench/ or .cache/, ../shared/... for the shared data, '.' (this record's directory) for "
        "the run's output directory; other machine-local paths dropped (null). No other value changed.")


def is_abs(value: Any) -> bool:
    """Whether ``value`` is a one-line string holding an absolute POSIX path."""
    return isinstance(value, str) and value.startswith("/") and "\n" not in value and " " not in value


def relative_path(text: str, key: str) -> str | None:
    """The repository-relative form of the absolute path ``text`` recorded under ``key``; None when it has none
    (a machine-local path that is dropped)."""
    parts = PurePosixPath(text).parts[1:]
    for i, part in enumerate(parts):
        if part in CHECKOUT_DIRS and i >= 1:
            return "/".join(parts[i:])
    if key in OUT_KEYS:
        return "."
    if SHARED in parts[:2]:
        i = parts.index(SHARED)
        return "/".join(("..", *parts[i:]))
    return None


def migrate_tree(tree: Any, where: str = "") -> tuple[Any, dict[str, str], dict[str, str]]:
    """``tree`` with every absolute path rewritten; the rewritten keys (dotted → new value) and the dropped ones
    (dotted → a note with the path's last component)."""
    rewritten: dict[str, str] = {}
    dropped: dict[str, str] = {}

    def walk(node: Any, path: str, key: str) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, f"{path}.{k}" if path else str(k), str(k)) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, f"{path}[{i}]", key) for i, v in enumerate(node)]
        if is_abs(node):
            new = relative_path(node, key)
            if new is None:
                dropped[path] = f"a machine-local path dropped (its last component: {PurePosixPath(node).name})"
            else:
                rewritten[path] = new
            return new
        return node

    return walk(tree, where, ""), rewritten, dropped


def dumps(record: Any) -> str:
    """The records' own layout (sorted keys, two-space indent, a final newline)."""
    return json.dumps(record, indent=2, sort_keys=True) + "\n"


def migrate_file(path: Path) -> dict[str, Any] | None:
    """Rewrites ``path`` in place; its ``path_migration`` block, or None when it held no absolute path."""
    record = json.loads(path.read_text())
    new, rewritten, dropped = migrate_tree(record)
    if not rewritten and not dropped:
        return None
    block = {"note": NOTE, "rewritten": sorted(rewritten), "dropped": dropped}
    if isinstance(new, dict):
        previous = new.get(BLOCK) or {}
        block["rewritten"] = sorted(set(previous.get("rewritten", [])) | set(block["rewritten"]))
        block["dropped"] = {**previous.get("dropped", {}), **dropped}
        new[BLOCK] = block
    path.write_text(dumps(new))
    return block


def migrate_dirs(dirs: Iterable[Path]) -> dict[str, dict[str, Any]]:
    """Every ``*.json`` under ``dirs`` migrated; the blocks of the files that changed, by path."""
    done = {}
    for root in dirs:
        for path in sorted(Path(root).rglob("*.json")):
            block = migrate_file(path)
            if block is not None:
                done[str(path)] = block
    return done
