"""Token features and labels that several probes build the same way: every token's tag id, the
most-frequent-tag-per-word baseline, the cached layers as one (tokens, L+1, dim) array, GloVe vectors per token.
Generic helpers of the UD probes (they were the converged POS probe's until other probes used them)."""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch

from elmo_bench.data.glove import lookup
from elmo_bench.tasks.api import Example


def tag_ids(examples: Sequence[Example], labels: Sequence[str]) -> torch.Tensor:
    """Every token's tag id in sentence order (n_tokens,); -1 for a tag outside ``labels``."""
    index = {t: i for i, t in enumerate(labels)}
    return torch.tensor([index.get(t, -1) for ex in examples for t in ex["tags"]], dtype=torch.long)


def most_frequent_tag(train: Sequence[Example]) -> Callable[[str], str]:
    """word → its most frequent training tag (exact, then lower-cased form), else the overall most frequent tag.
    Ties go to the alphabetically first tag, so the baseline is deterministic."""
    exact: dict[str, Counter] = {}
    lower: dict[str, Counter] = {}
    overall: Counter = Counter()
    for ex in train:
        for word, tag in zip(ex["tokens"], ex["tags"]):
            exact.setdefault(word, Counter())[tag] += 1
            lower.setdefault(word.lower(), Counter())[tag] += 1
            overall[tag] += 1
    if not overall:
        raise ValueError("most_frequent_tag: no training tokens")

    def best(counts: Counter) -> str:
        return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]

    exact_best = {w: best(c) for w, c in exact.items()}
    lower_best = {w: best(c) for w, c in lower.items()}
    default = best(overall)
    return lambda word: exact_best.get(word) or lower_best.get(word.lower()) or default


def baseline_accuracy(train: Sequence[Example], examples: Sequence[Example]) -> float:
    """Token accuracy (percent) of the most-frequent-tag-per-word baseline."""
    tagger = most_frequent_tag(train)
    pairs = [(tagger(w), t) for ex in examples for w, t in zip(ex["tokens"], ex["tags"])]
    return 100.0 * sum(p == g for p, g in pairs) / len(pairs) if pairs else 0.0


def layer_features(layers: Any, count: int, dtype: Any = np.float32) -> np.ndarray:
    """Token features of ``count`` sentences from ``layers.get(i)`` (L+1, n_i, dim) → (n_tokens, L+1, dim) in
    ``dtype`` (None: the source's own, fp16 from the activation cache: its ``stored(i)``, never a float32 copy)."""
    read = getattr(layers, "stored", layers.get) if dtype is None else layers.get
    arrays = [np.asarray(read(i), dtype=dtype).transpose(1, 0, 2) for i in range(count)]
    return np.concatenate(arrays, axis=0) if arrays else np.zeros((0, 1, 1), dtype=dtype or np.float32)


def glove_features(examples: Sequence[Example], vectors: Mapping[str, np.ndarray], dim: int) -> np.ndarray:
    """(n_tokens, dim) GloVe vectors, zeros for words GloVe lacks."""
    rows = [lookup(vectors, w) for ex in examples for w in ex["tokens"]]
    out = np.zeros((len(rows), dim), dtype=np.float32)
    for i, row in enumerate(rows):
        if row is not None:
            out[i] = row
    return out
