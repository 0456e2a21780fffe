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


class StoredTokens:
    """A split's token features (n_tokens, L+1, dim) left in an activation-cache entry (``source``: its ``stored(i)``,
    (L+1, n_i, dim) in the cache's dtype) and read a range of tokens at a time (:meth:`read`). Why: a copy of every
    layer of every split (fp16, (tokens, layers, dim)) grows with the model's depth and width (an 8B model: 33
    layers of 4096); read this way the probe holds one chunk of one layer, and the entry's pages are let go after
    each read (``source.release()``), so a memory map does not add the whole file to the resident set either."""

    def __init__(self, source: Any, count: int) -> None:
        self.source = source
        lengths = [source.stored(i).shape[1] for i in range(count)]     # views of the map: no page is read
        self.ends = np.cumsum(lengths, dtype=np.int64)
        first = source.stored(0) if count else np.zeros((1, 0, 1), dtype=np.float16)
        self.shape = (int(self.ends[-1]) if count else 0, first.shape[0], first.shape[2])
        self.dtype = first.dtype

    def __len__(self) -> int:
        return self.shape[0]

    def read(self, start: int, stop: int, layer: int | None = None) -> np.ndarray:
        """Tokens [start, stop) in sentence order: (stop - start, L+1, dim), or ``layer``'s (stop - start, dim), in
        the stored dtype (a new array)."""
        stop = max(start, min(stop, len(self)))
        out = np.empty((stop - start, *([] if layer is not None else [self.shape[1]]), self.shape[2]), self.dtype)
        sentence = int(np.searchsorted(self.ends, start, side="right"))
        at = start
        while at < stop:
            begins = int(self.ends[sentence - 1]) if sentence else 0
            upto = min(stop, int(self.ends[sentence]))
            stored = self.source.stored(sentence)                          # (L+1, n_i, dim)
            piece = stored[layer] if layer is not None else stored.transpose(1, 0, 2)
            out[at - start: upto - start] = piece[at - begins: upto - begins]
            at, sentence = upto, sentence + 1
        release = getattr(self.source, "release", None)
        if callable(release):
            release()
        return out


class TokenColumn:
    """One row of a probe read lazily from :class:`StoredTokens`, an array-like (n_tokens, dim): ``layer`` k in the
    stored dtype, or (``layer`` None) the mean of every layer in float32 (numpy's mean over the layer axis, a
    token's value whatever the chunk). Slicing reads that range only (``average_chunk`` tokens at a time for the
    mean); ``np.asarray`` reads the whole column."""

    def __init__(self, tokens: StoredTokens, layer: int | None, average_chunk: int = 4096) -> None:
        self.tokens, self.layer, self.average_chunk = tokens, layer, average_chunk
        self.shape = (tokens.shape[0], tokens.shape[2])
        self.dtype = tokens.dtype if layer is not None else np.dtype(np.float32)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: slice) -> np.ndarray:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError(f"TokenColumn: only contiguous slices, found {key!r}")
        start, stop, _ = key.indices(len(self))
        if self.layer is not None:
            return self.tokens.read(start, stop, self.layer)
        out = np.empty((max(stop - start, 0), self.shape[1]), dtype=np.float32)
        for at in range(start, stop, self.average_chunk):
            block = self.tokens.read(at, min(at + self.average_chunk, stop))
            out[at - start: at - start + len(block)] = block.mean(axis=1, dtype=np.float32)
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        whole = self[:]
        return whole if dtype is None else whole.astype(dtype, copy=False)


def split_tokens(layers: Any, count: int) -> np.ndarray | StoredTokens:
    """A split's token features as a probe reads them: left in the activation cache (:class:`StoredTokens`) when
    ``layers`` is a cache entry (it has ``stored``), else computed once into one array in the source's dtype
    (``cache=false``: :func:`layer_features`)."""
    if hasattr(layers, "stored"):
        return StoredTokens(layers, count)
    return layer_features(layers, count, None)


def layer_column(tokens: np.ndarray | StoredTokens, layer: int | None) -> Any:
    """Layer ``layer``'s (n_tokens, dim) of a split (None: the mean of every layer, float32): a view of an array,
    or a :class:`TokenColumn` of a split left in the cache."""
    if isinstance(tokens, StoredTokens):
        return TokenColumn(tokens, layer)
    return tokens[:, layer] if layer is not None else tokens.mean(axis=1, dtype=np.float32)


def glove_features(examples: Sequence[Example], vectors: Mapping[str, np.ndarray], dim: int) -> np.ndarray:
    """(n_tokens, dim) GloVe vectors, zeros for words GloVe lacks."""
    rows = [lookup(vectors, w) for ex in examples for w in ex["tokens"]]
    out = np.zeros((len(rows), dim), dtype=np.float32)
    for i, row in enumerate(rows):
        if row is not None:
            out[i] = row
    return out
