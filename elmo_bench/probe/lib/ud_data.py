"""UD English-EWT as every UD probe reads it, checked at the door as a run's data is (elmo_bench.data.split_checks):
each split file a regular file (a FIFO or a device would hang the reader), no split empty (an empty dev split
would early-stop on nothing and report 0.0), and a dev or test split that is a copy or a part of train (or test of
dev) refused above ``data.max_overlap``'s default (a most-frequent-tag baseline "on test" that is train scores
96.93 against 67.26)."""
from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable, Mapping, Sequence

from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.data.conllu import read_conllu
from elmo_bench.data.data_config import DataConfig
from elmo_bench.data.split_checks import check_splits
from elmo_bench.probe.lib.conllu_trees import read_trees

SPLITS = ("train", "dev", "test")


def split_paths(directory: Path) -> dict[str, str]:
    """en_ewt-ud-{train,dev,test}.conllu(.gz) in ``directory``, each a regular file; one line otherwise."""
    paths = {}
    for split in SPLITS:
        found = [p for p in (directory / f"en_ewt-ud-{split}.conllu{ext}" for ext in ("", ".gz")) if p.exists()]
        if not found:
            raise DataError(f"{directory}: no en_ewt-ud-{split}.conllu(.gz) (expected a UD English-EWT directory)")
        if not stat.S_ISREG(found[0].stat().st_mode):
            raise ConfigError(f"{found[0]}: not a regular file (a FIFO, device or socket would hang the reader); "
                              f"expected the {split} split's CoNLL-U file")
        paths[split] = str(found[0])
    return paths


def checked(splits: Mapping[str, Sequence[Any]], paths: Mapping[str, str],
            key_of: Callable[[Any], Hashable | None]) -> dict[str, float]:
    """The door's split checks over the probe's splits as read (before the training split is cut): one line for an
    empty split or one that is (mostly) another; returns the overlap shares (results.json ``data.split_overlap``)."""
    return check_splits(splits, dict(paths), DataConfig(), key_of)


def sentence_key(tokens: Sequence[str]) -> tuple[str, ...] | None:
    """A sentence's overlap key: its tokens (None for an empty one)."""
    return tuple(tokens) or None


@dataclass
class UdSplits:
    """The splits a probe uses (train cut to its first N sentences), their overlap shares as read, and the number
    of training sentences before the cut."""

    splits: dict[str, list[Any]]
    overlap: dict[str, float]
    train_total: int

    @property
    def cut(self) -> bool:
        return len(self.splits["train"]) < self.train_total


def tagged_data_block(read: UdSplits, tags: str, max_train_sentences: int | None) -> dict[str, Any]:
    """results.json's ``data`` of a tagging probe (pos, pos_controls, ridge): the training size and whether it was
    cut (the report keeps one row per size), the tag column, and the splits' overlap."""
    splits = read.splits
    return {"name": "ud_ewt_pos", "fraction": 1.0, "train_sentences": len(splits["train"]),
            "all_train_sentences": None if max_train_sentences else len(splits["train"]),
            "tag_column": tags, "dev_sentences": len(splits["dev"]), "test_sentences": len(splits["test"]),
            "split_overlap": read.overlap}


def _cut(splits: dict[str, list], shares: Any, max_train: int | None, max_dev: int | None) -> UdSplits:
    """Checked splits with train cut to its first ``max_train`` sentences and dev to ``max_dev`` (the full train
    size kept: the records say how much of it was used)."""
    total = len(splits["train"])
    if max_train:
        splits["train"] = splits["train"][:max_train]
    if max_dev:
        splits["dev"] = splits["dev"][:max_dev]
    return UdSplits(splits, shares, total)


def read_tagged(directory: Path, tag_column: str, max_train: int | None, max_dev: int | None = None) -> UdSplits:
    """The three splits as ``{"id", "tokens", "tags"}`` examples (tags from ``tag_column``), checked, then train cut
    to its first ``max_train`` sentences (and dev to ``max_dev``)."""
    paths = split_paths(directory)
    splits = {s: read_conllu(p, tag_column, s) for s, p in paths.items()}
    shares = checked(splits, paths, lambda ex: sentence_key(ex["tokens"]))
    return _cut(splits, shares, max_train, max_dev)


def read_tree_splits(directory: Path, max_train: int | None, max_dev: int | None = None) -> UdSplits:
    """The three splits as checked dependency trees (elmo_bench.probe.lib.conllu_trees), train cut to ``max_train``
    (and dev to ``max_dev``)."""
    paths = split_paths(directory)
    splits = {s: read_trees(p, s) for s, p in paths.items()}
    shares = checked(splits, paths, lambda tree: sentence_key(tree.tokens))
    return _cut(splits, shares, max_train, max_dev)


def read_labelled(directory: Path, tags: str, max_train: int | None, max_dev: int | None = None) -> UdSplits:
    """The checked splits as ``{"tokens", "tags"}`` examples labelled by ``tags``: UPOS / XPOS (:func:`read_tagged`),
    or each word's universal dependency relation (``deprel``: :func:`read_tree_splits`, the part before ``:``)."""
    if tags != "deprel":
        return read_tagged(directory, tags, max_train, max_dev)
    found = read_tree_splits(directory, max_train, max_dev)
    found.splits = {s: [{"tokens": t.tokens, "tags": t.deprel} for t in trees] for s, trees in found.splits.items()}
    return found


def tagged_sentences(directory: Path, tag_column: str, max_train: int | None,
                     max_dev: int | None = None) -> dict[str, list[list[str]]]:
    """The words per split a tagging probe (pos, mdl) sends through the encoder: :func:`read_tagged`'s, checked
    and cut as the probe reads them (for ``elmo-bench plan``)."""
    read = read_tagged(directory, tag_column, max_train, max_dev)
    return {s: [list(ex["tokens"]) for ex in examples] for s, examples in read.splits.items()}


def tree_sentences(directory: Path, max_train: int | None) -> dict[str, list[list[str]]]:
    """The words per split the structural probe sends through the encoder (:func:`read_tree_splits`)."""
    read = read_tree_splits(directory, max_train)
    return {s: [list(tree.tokens) for tree in trees] for s, trees in read.splits.items()}
