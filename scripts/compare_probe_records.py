"""Compare two probe records value by value: is a re-run's ``results.json`` the committed one's numbers exactly?

    python scripts/compare_probe_records.py docs/results/probe_suite/bilm_v2/pos/results.json /tmp/pos/results.json
    python scripts/compare_probe_records.py docs/results/probe_suite/bilm_v2 /tmp/suite   # every results.json below
    python scripts/compare_probe_records.py A B --block probes       # another block (here each probe's dev loss)

A and B are two ``results.json`` files, or two directories whose ``results.json`` files are paired by their path
below each. The block (``metrics`` unless ``--block``) is flattened to dotted keys (``dev.mlp1/layer_0_accuracy``)
and each key's values are compared exactly (no tolerance: issue 44 asks for identical numbers; NaN equals NaN).
Prints, per pair, the counts of identical and different values, then each differing key with both values, and keys
found on one side only. Exit 0 when every pair is identical, 1 when any value differs or is missing, 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

RECORD = "results.json"


@dataclass
class Comparison:
    """The outcome for one pair of records: keys with equal values, keys whose values differ, keys on one side."""

    identical: list[str] = field(default_factory=list)
    different: list[tuple[str, Any, Any]] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not (self.different or self.only_a or self.only_b)


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts and lists as {dotted key: leaf value} (list items keyed by their index)."""
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(str(i), v) for i, v in enumerate(value)]
    else:
        return {prefix: value}
    out: dict[str, Any] = {}
    for key, item in items:
        out.update(flatten(item, f"{prefix}.{key}" if prefix else key))
    return out


def equal(a: Any, b: Any) -> bool:
    """Exact equality; NaN equals NaN (a record's NaN re-run as NaN is the same number), True is not 1."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def compare(a: Any, b: Any) -> Comparison:
    """Compare two blocks (nested dicts of numbers) key by key."""
    flat_a, flat_b = flatten(a), flatten(b)
    result = Comparison(only_a=sorted(set(flat_a) - set(flat_b)), only_b=sorted(set(flat_b) - set(flat_a)))
    for key in sorted(set(flat_a) & set(flat_b)):
        if equal(flat_a[key], flat_b[key]):
            result.identical.append(key)
        else:
            result.different.append((key, flat_a[key], flat_b[key]))
    return result


def load_block(path: Path, block: str) -> Any:
    """The block of one record; SystemExit (one line, exit 2) when it cannot be read or lacks the block."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"compare_probe_records: {path}: expected a readable JSON record ({exc})") from None
    if not isinstance(record, dict) or block not in record:
        raise SystemExit(f"compare_probe_records: {path}: expected a top-level {block!r} block, found none")
    return record[block]


def pairs(a: Path, b: Path) -> list[tuple[str, Path, Path | None]]:
    """(name, A's record, B's record or None) for two files, or for every results.json below directory A."""
    if a.is_file() and b.is_file():
        return [(str(a), a, b)]
    if a.is_dir() and b.is_dir():
        found = sorted(a.rglob(RECORD))
        if not found:
            raise SystemExit(f"compare_probe_records: {a}: expected {RECORD} files below it, found none")
        return [(str(p.relative_to(a)), p, b / p.relative_to(a) if (b / p.relative_to(a)).is_file() else None)
                for p in found]
    raise SystemExit(f"compare_probe_records: expected two {RECORD} files or two directories, found {a} and {b}")


def report(name: str, result: Comparison) -> list[str]:
    """The lines printed for one pair."""
    lines = [f"{name}: {len(result.identical)} identical, {len(result.different)} different"
             + (f", {len(result.only_a)} only in A, {len(result.only_b)} only in B"
                if result.only_a or result.only_b else "")]
    lines += [f"  differs {key}: {va!r} vs {vb!r}" for key, va, vb in result.different]
    lines += [f"  only in A: {key}" for key in result.only_a] + [f"  only in B: {key}" for key in result.only_b]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="the committed record (results.json) or a directory of them")
    parser.add_argument("b", type=Path, help="the re-run's record or directory")
    parser.add_argument("--block", default="metrics", help="the top-level block compared (default: metrics)")
    args = parser.parse_args(argv)
    same = True
    for name, path_a, path_b in pairs(args.a, args.b):
        if path_b is None:
            print(f"{name}: missing in B")
            same = False
            continue
        result = compare(load_block(path_a, args.block), load_block(path_b, args.block))
        print("\n".join(report(name, result)))
        same = same and result.same
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
