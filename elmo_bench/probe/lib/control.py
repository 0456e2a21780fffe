"""The POS control task of Hewitt & Liang (2019), "Designing and Interpreting Probes with Control Tasks".

Every word type (its exact, case-sensitive form) gets one label drawn at random, and every token of that type carries
it, in every sentence and every split. A probe that scores well on these labels can only have memorised word
identity, so ``selectivity = task accuracy - control accuracy`` says how much of a probe's POS accuracy the layer,
not the probe, explains.

Construction, as control-tasks' ``CorruptedPartOfSpeechLabelTask`` does it at ``corrupted_token_percent: 1.0``: the
types are listed in order of first occurrence over train, then dev, then test; one seeded generator shuffles that
list and then, visiting the types in the shuffled order, draws each type's label from the empirical tag distribution
of the training tokens. (The authors hard-code PTB's training distribution; here it is the training split's own.)
"""
from __future__ import annotations

from collections import Counter
from typing import Mapping, Sequence

import numpy as np
import torch

from elmo_bench.probe.lib.features import tag_ids
from elmo_bench.probe.lib.ud_data import SPLITS

Sentences = Sequence[Sequence[str]]


def training_distribution(train_tags: Sentences, labels: Sequence[str]) -> np.ndarray:
    """(len(labels),) share of training tokens carrying each label (sums to 1)."""
    counts = Counter(t for sentence in train_tags for t in sentence)
    total = sum(counts[label] for label in labels)
    if total == 0:
        raise ValueError("control task: no training tokens to take the tag distribution from")
    return np.array([counts[label] / total for label in labels], dtype=np.float64)


def control_labels(splits: Sequence[Sentences], train_tags: Sentences, labels: Sequence[str],
                   seed: int) -> dict[str, str]:
    """word type → its control label.

    ``splits``: the token lists of train, dev and test (in that order); ``labels``: the tag set (sorted training
    tags); the same seed and data give the same mapping."""
    order: dict[str, None] = {}
    for sentences in splits:
        for sentence in sentences:
            for word in sentence:
                order.setdefault(word, None)
    types = list(order)
    rng = np.random.RandomState(seed)
    rng.shuffle(types)
    probabilities = training_distribution(train_tags, labels)
    ids = np.arange(len(labels))
    return {word: labels[int(rng.choice(ids, p=probabilities))] for word in types}


def relabel(sentences: Sentences, mapping: dict[str, str]) -> list[list[str]]:
    """Each sentence's control tags: every token gets its type's label."""
    return [[mapping[word] for word in sentence] for sentence in sentences]


def control_tags(splits: Mapping[str, Sequence[dict]], labels: Sequence[str], seed: int) -> dict[str, torch.Tensor]:
    """{split: (tokens,) control tag ids} for one seed: every type's label drawn once, shared by all splits."""
    tokens = {s: [ex["tokens"] for ex in splits[s]] for s in SPLITS}
    mapping = control_labels([tokens[s] for s in SPLITS], [ex["tags"] for ex in splits["train"]], labels, seed)
    return {s: tag_ids([{"tags": tags} for tags in relabel(tokens[s], mapping)], labels) for s in SPLITS}
