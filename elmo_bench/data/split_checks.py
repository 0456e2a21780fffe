"""Checks on the splits a run reads, made once in the engine for every task's reader (elmo_bench.engine.experiment).

An empty split (an empty file, only blank lines, only ``-DOCSTART-`` lines) would train or select on nothing and
still write results; two splits of identical content (the test file given as training data, a test file that is a
copy of dev) would report a score on seen data. Both are refused with one line naming the file(s);
``data.allow_identical_splits=true`` lets a user who means it evaluate on a copy (a sanity check that a model can
fit its training data, say).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Sequence

from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.data.splits import split_location

#: the config key that allows splits of identical content
ALLOW_IDENTICAL = "allow_identical_splits"


def where(data_cfg: Mapping[str, Any], split: str) -> str:
    """The file (or hub split) a split was read from, for messages; the split name when the config has none."""
    try:
        location = split_location(data_cfg, split)
    except DataError:
        location = None
    return location or f"the {split} split"


def content_hash(examples: Sequence[Mapping[str, Any]], text_fields: Sequence[str]) -> str:
    """sha256 of the splits' texts in order (every text field of every example): equal for two copies of a file,
    and for one file read twice, whatever the example ids (which name the split)."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(json.dumps([example.get(name) for name in text_fields]).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def check_splits(splits: Mapping[str, Sequence[Mapping[str, Any]]], data_cfg: Mapping[str, Any],
                 text_fields: Sequence[str]) -> None:
    """DataError ``FILE: no sentences`` for an empty split; ConfigError naming both files for two splits of
    identical content, unless ``data.allow_identical_splits`` is true."""
    for split, examples in splits.items():
        if not examples:
            raise DataError(f"{where(data_cfg, split)}: no sentences (the {split} split is empty: "
                            f"an empty file, blank lines or only -DOCSTART- lines)")
    if data_cfg.get(ALLOW_IDENTICAL):
        return
    seen: dict[str, str] = {}
    for split, examples in splits.items():
        key = content_hash(examples, text_fields)
        if key in seen:
            first = seen[key]
            raise ConfigError(f"data: the {first} split ({where(data_cfg, first)}) and the {split} split "
                              f"({where(data_cfg, split)}) have identical content; a score on data the model was "
                              f"trained or selected on means nothing (set data.{ALLOW_IDENTICAL}=true if you mean it)")
        seen[key] = split
