"""Checks on the splits a run reads, made once in the engine for every task's reader (elmo_bench.engine.experiment).

An empty split (an empty file, only blank lines, only ``-DOCSTART-`` lines) would train or select on nothing and
still write results: refused with one line naming the file.

Leakage: a dev or test example whose text is also in train (or a test example also in dev) is scored on data the
model was trained or selected on. The share of such examples is measured on the splits as read (before
``data.fraction``), by each task's ``Task.example_key`` (the tuple of its text fields' token lists; SST counts
roots only), and recorded in results.json (``data.split_overlap``). Above ``data.max_overlap`` (default 0.25,
elmo_bench.data.data_config.DataConfig) the run is refused with one line naming both files and the share; two
splits of identical content (the test file given as training data, a test file that is a copy or a shuffle of dev)
are the 100% case. ``data.allow_identical_splits=true`` lets a user who means it evaluate on a copy (a sanity
check that a model can fit its training data, say).
The shared data's highest share: 5.9% (CoNLL-2003 dev in train).
"""
from __future__ import annotations

from typing import Any, Callable, Hashable, Mapping, Sequence

from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.data.data_config import DataConfig
from elmo_bench.data.splits import split_location

#: the config key that lets a run whose splits overlap (up to identical content) go
ALLOW_IDENTICAL = "allow_identical_splits"
#: the config key of the largest share of a split's examples allowed in an earlier split
MAX_OVERLAP = "max_overlap"
#: an example → its key (None: not counted); Task.example_key
KeyOf = Callable[[Mapping[str, Any]], Hashable | None]


def where(data_cfg: Mapping[str, Any], split: str) -> str:
    """The file (or hub split) a split was read from, for messages; the split name when the config has none."""
    try:
        location = split_location(data_cfg, split)
    except DataError:
        location = None
    return location or f"the {split} split"


def overlap_pairs(splits: Sequence[str]) -> list[tuple[str, str]]:
    """(split, earlier split) pairs measured: every split but train against train, and every split but train and
    dev (test, SRL's test_brown) against dev."""
    pairs = [(split, "train") for split in splits if split != "train" and "train" in splits]
    return pairs + [(split, "dev") for split in splits if split not in ("train", "dev") and "dev" in splits]


def split_overlap(splits: Mapping[str, Sequence[Mapping[str, Any]]], key_of: KeyOf) -> dict[str, float]:
    """``{"<split>_in_<earlier>": share}``: the share (0..1) of ``split``'s counted examples whose key is also an
    example key of ``earlier`` (e.g. ``dev_in_train``, ``test_in_train``, ``test_in_dev``); 0 for a split with no
    counted example."""
    keys = {split: [key for key in map(key_of, examples) if key is not None] for split, examples in splits.items()}
    seen = {split: set(found) for split, found in keys.items()}
    shares: dict[str, float] = {}
    for split, earlier in overlap_pairs(list(splits)):
        found = keys[split]
        shared = sum(1 for key in found if key in seen[earlier])
        shares[f"{split}_in_{earlier}"] = shared / len(found) if found else 0.0
    return shares


def refuse_overlap(shares: Mapping[str, float], data_cfg: Mapping[str, Any], common: DataConfig) -> None:
    """ConfigError naming both files (``data_cfg``: where the splits were read) and the share for the first pair
    above ``common.max_overlap``, unless ``common.allow_identical_splits``."""
    if common.allow_identical_splits:
        return
    limit = float(common.max_overlap)
    for name, share in shares.items():
        if share <= limit:
            continue
        split, _, earlier = name.partition("_in_")
        raise ConfigError(f"data: the {split} split ({where(data_cfg, split)}) shares {100 * share:.1f}% of its "
                          f"examples with the {earlier} "
                          f"split ({where(data_cfg, earlier)}): above data.{MAX_OVERLAP}={limit:g}, a score on data "
                          f"the model was trained or selected on means nothing (raise data.{MAX_OVERLAP}, or set "
                          f"data.{ALLOW_IDENTICAL}=true if you mean it)")


def check_splits(splits: Mapping[str, Sequence[Mapping[str, Any]]], data_cfg: Mapping[str, Any], common: DataConfig,
                 key_of: KeyOf) -> dict[str, float]:
    """DataError ``FILE: no sentences`` for an empty split; the splits' overlap shares (split_overlap), refused
    above ``data.max_overlap`` (refuse_overlap; ``common``: the data group's typed keys)."""
    for split, examples in splits.items():
        if not examples:
            raise DataError(f"{where(data_cfg, split)}: no sentences (the {split} split is empty: "
                            f"an empty file, blank lines or only -DOCSTART- lines)")
    shares = split_overlap(splits, key_of)
    refuse_overlap(shares, data_cfg, common)
    return shares
