"""A checkpoint series checked before a sweep starts (issue 57 item 3, run.py's sweep check): the checkpoints its
jobs name (each encoder kind's ``checkpoint`` hook, else a local ``encoder.path``) are compared by content, and two
under different paths with equal weights are one warning line (no GPU hour on a duplicate); the checkpoints of one
series (one kind, one choice of its groups) must share the kind's ``architecture``, else one line, exit 2, before
anything is written."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.checkpoints import checkpoint_path
from elmo_bench.encoders.kinds import kind_of
from elmo_bench.encoders.model_files import directory_hash, file_hash, is_model_directory


def checkpoint_of(cfg: Mapping[str, Any]) -> Path | None:
    """The file or directory holding a job's weights, when it is on this machine (a hub name: None): the door's
    reading of a composed job (elmo_bench.encoders.checkpoints.checkpoint_path, which probe records share)."""
    return checkpoint_path(cfg)


def content_hash(path: Path) -> str | None:
    """sha256 of a weights file, or a model directory's hash over its weights, config and tokenizer (another
    directory: None, not compared)."""
    if path.is_file():
        return file_hash(path)
    return directory_hash(path) if is_model_directory(path) else None


def duplicates(paths: Sequence[Path]) -> list[list[Path]]:
    """The groups of two or more different paths whose contents hash equal, in first-seen order."""
    by_hash: dict[str, list[Path]] = {}
    for path in dict.fromkeys(p.resolve() for p in paths):
        digest = content_hash(path)
        if digest is not None:
            by_hash.setdefault(digest, []).append(path)
    return [group for group in by_hash.values() if len(group) > 1]


def _series_key(cfg: Mapping[str, Any]) -> tuple[str, ...]:
    """One series: the jobs of one kind and one choice of each group it reads (``bilm=custom``)."""
    kind = kind_of(cfg.get("encoder") or {})
    choices = cfg.get("choices") or {}
    return (kind.name, *(str(choices.get(group)) for group in kind.groups))


def check_architectures(configs: Sequence[Mapping[str, Any]]) -> None:
    """ConfigError (one line) when two checkpoints of one series differ in what their kind's ``architecture``
    reads: the first such value, with both checkpoints named."""
    seen: dict[tuple[str, ...], tuple[Path, Mapping[str, Any]]] = {}
    for cfg in configs:
        kind, path = kind_of(cfg.get("encoder") or {}), checkpoint_of(cfg)
        if kind.architecture is None or path is None:
            continue
        facts = dict(kind.architecture(cfg))
        first = seen.setdefault(_series_key(cfg), (path, facts))
        differ = [key for key in dict.fromkeys([*first[1], *facts]) if first[1].get(key) != facts.get(key)]
        if differ:
            key = differ[0]
            raise ConfigError(f"checkpoint series: mixed architectures: {first[0]} and {path} differ in {key} "
                              f"({first[1].get(key)} vs {facts.get(key)}); sweep one architecture at a time")


def check_series(configs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The series of a sweep's composed jobs: mixed architectures refused (check_architectures), then one warning
    line on stderr per set of checkpoints with identical weights. Returns the warning lines."""
    check_architectures(configs)
    paths = [path for path in (checkpoint_of(cfg) for cfg in configs) if path is not None]
    lines = []
    for group in duplicates(paths):
        named = " and ".join(str(path) for path in group)
        lines.append(f"warning: checkpoint series: identical weights: {named} (sha256 "
                     f"{content_hash(group[0])[:10]}): their runs would repeat one another")
        print(lines[-1], file=sys.stderr)
    return lines
