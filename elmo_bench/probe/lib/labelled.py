"""A UD probe's words and labels as arrays: the checked splits read with one label per word (UPOS, XPOS or the
dependency relation), the label ids from the training labels, and the cached layers of the splits it scores; shared
by the probes that measure information about a label (bits, erasure)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from elmo_bench.base.errors import ConfigError
from elmo_bench.probe.api import ProbeContext
from elmo_bench.probe.lib.features import layer_features
from elmo_bench.probe.lib.ud_data import UdSplits, read_labelled
from elmo_bench.probe.settings import UD_EWT


@dataclass
class Labelled:
    """The train, dev and test tokens: words, label ids (dev, test: -1 for a label unseen in training), sentence
    lengths."""

    words: dict[str, list[str]]
    y: dict[str, np.ndarray]
    lengths: dict[str, list[int]]
    classes: list[str]


def read(context: ProbeContext, settings: Any, max_dev: int | None = None) -> UdSplits:
    """The checked splits as ``{"tokens", "tags"}`` (UPOS/XPOS, or each word's universal dependency relation)."""
    return read_labelled(context.data_dir(settings.data_dir, UD_EWT), settings.tags, settings.max_train_sentences,
                         max_dev)


def labelled(splits: dict[str, list[dict[str, Any]]]) -> Labelled:
    """Label ids of train and test from the training labels; one line when training has a single label."""
    classes = sorted({t for ex in splits["train"] for t in ex["tags"]})
    if len(classes) < 2:
        raise ConfigError(f"probe: the training split has {len(classes)} label(s) ({classes}); expected "
                          f"at least 2 to measure information about them")
    index = {c: i for i, c in enumerate(classes)}
    names = ("train", "dev", "test")
    words = {s: [w for ex in splits[s] for w in ex["tokens"]] for s in names}
    y = {s: np.array([index.get(t, -1) for ex in splits[s] for t in ex["tags"]], dtype=np.int64) for s in names}
    lengths = {s: [len(ex["tokens"]) for ex in splits[s]] for s in names}
    return Labelled(words, y, lengths, classes)


def features(context: ProbeContext, splits: dict[str, list[dict[str, Any]]],
             names: tuple[str, ...] = ("train", "test")) -> dict[str, np.ndarray]:
    """{split: (tokens, L+1, dim) float32} of the ``names`` splits from the activation cache."""
    return {s: layer_features(context.layers([ex["tokens"] for ex in splits[s]], f"ud_ewt/{s}"), len(splits[s]))
            for s in names}
