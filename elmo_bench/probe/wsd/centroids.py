"""The WSD probe of the paper (section 5.3): nearest sense centroid (1-NN, cosine) in one biLM layer.

Training: the representation of every sense-tagged SemCor word (mean over the tokens of a multiword span) is added
to the centroid of each of its sense keys, separately for every view: each biLM layer 0..L and the average of all
layers. Test: an instance whose (lemma, pos) has senses seen in training gets the sense whose centroid is nearest by
cosine; otherwise the lemma's most frequent SemCor sense (counted over all SemCor sentences read, which may be more
than the ones embedded), otherwise WordNet's first sense (``elmo_bench.probe.wsd.wordnet``), otherwise no answer (the
scorer then counts the instance in recall only). Two baselines come with every run: ``mfs`` (the SemCor most frequent
sense, then WordNet's first sense) and ``wordnet_first_sense`` (WordNet's first sense alone, the paper's 65.9).
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np
from tqdm import tqdm

from elmo_bench.probe.lib.semcor import SS_TYPE_POS, SenseSpan, WsdSentence

log = logging.getLogger(__name__)
LemmaPos = tuple[str, str]


def view_names(num_layers: int) -> list[str]:
    """``layer_0`` .. ``layer_L`` then ``average`` (the mean of all L+1 layers)."""
    return [f"layer_{k}" for k in range(num_layers)] + ["average"]


def key_lemma_pos(key: str) -> LemmaPos:
    """``art%1:09:00::`` → ("art", "n"): the lemma and WordNet pos a sense key belongs to."""
    lemma, _, lexsn = key.partition("%")
    return lemma.lower(), SS_TYPE_POS.get(lexsn[:1], "x")


def span_views(layers: np.ndarray, span: SenseSpan) -> np.ndarray:
    """layers (L+1, n, dim) → (L+2, dim): each layer's mean over the span's tokens, then the mean of those."""
    per_layer = layers[:, span.start: span.end].mean(axis=1)
    return np.concatenate([per_layer, per_layer.mean(axis=0, keepdims=True)], axis=0)


def _normalise(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)


def sense_counts(sentences: Sequence[WsdSentence]) -> Counter:
    """How often each sense key tags a SemCor word (a word with several keys counts once for each)."""
    return Counter(key for s in sentences for span in s.spans for key in span.keys)


def most_frequent_senses(counts: Counter) -> dict[LemmaPos, str]:
    """(lemma, pos) → its most frequent key; ties go to the smallest key (deterministic)."""
    best: dict[LemmaPos, tuple[int, str]] = {}
    for key, count in counts.items():
        lp = key_lemma_pos(key)
        if lp not in best or (-count, key) < (-best[lp][0], best[lp][1]):
            best[lp] = (count, key)
    return {lp: key for lp, (_, key) in best.items()}


@dataclass
class SenseCentroids:
    """``vectors`` (views, senses, dim) L2-normalised; ``by_lemma`` (lemma, pos) → sense rows, in key order."""

    keys: list[str]
    vectors: np.ndarray
    by_lemma: dict[LemmaPos, list[int]]
    views: list[str]


def build_centroids(sentences: Sequence[WsdSentence], layers: Any, progress: bool = True) -> SenseCentroids:
    """Average the views of every sense-tagged word per sense key. ``layers.get(i)`` → (L+1, n_i, dim) for sentence i."""
    keys = sorted({key for s in sentences for span in s.spans for key in span.keys})
    index = {key: i for i, key in enumerate(keys)}
    sums: Optional[np.ndarray] = None
    counts = np.zeros(len(keys), dtype=np.float64)
    for i, sentence in enumerate(tqdm(sentences, desc="sense centroids", unit="sent", disable=not progress)):
        if not sentence.spans:
            continue
        array = layers.get(i)
        if sums is None:
            sums = np.zeros((array.shape[0] + 1, len(keys), array.shape[2]), dtype=np.float64)
        for span in sentence.spans:
            views = span_views(array, span)
            for key in span.keys:
                sums[:, index[key]] += views
                counts[index[key]] += 1
    if sums is None:
        raise ValueError("build_centroids: no sense-tagged word in the training sentences")
    by_lemma: dict[LemmaPos, list[int]] = {}
    for i, key in enumerate(keys):
        by_lemma.setdefault(key_lemma_pos(key), []).append(i)
    vectors = _normalise((sums / counts[None, :, None]).astype(np.float32))
    return SenseCentroids(keys, vectors, by_lemma, view_names(sums.shape[0] - 1))


def disambiguate(centroids: SenseCentroids, sentences: Sequence[WsdSentence], layers: Any,
                 mfs: dict[LemmaPos, str], wordnet: Optional[Callable[[str, str], Optional[str]]] = None,
                 progress: bool = True) -> tuple[dict[str, dict[str, str]], Counter]:
    """Predictions {view: {instance id: key}} for every view plus the baselines ``mfs`` (SemCor most frequent
    sense, else WordNet's first sense) and, with ``wordnet``, ``wordnet_first_sense``; and counts of how each
    instance was answered by the layer views (1nn, mfs, wordnet, none)."""
    baselines = ["mfs"] + (["wordnet_first_sense"] if wordnet is not None else [])
    predictions: dict[str, dict[str, str]] = {view: {} for view in [*centroids.views, *baselines]}
    how: Counter = Counter()
    for i, sentence in enumerate(tqdm(sentences, desc="1-NN", unit="sent", disable=not progress)):
        array = layers.get(i) if sentence.spans else None
        for span in sentence.spans:
            lp = (span.lemma, span.pos)
            first = wordnet(*lp) if wordnet is not None else None
            if first is not None:
                predictions["wordnet_first_sense"][span.id] = first
            fallback = mfs.get(lp, first)
            if fallback is not None:
                predictions["mfs"][span.id] = fallback
            rows = centroids.by_lemma.get(lp)
            if rows:
                query = _normalise(span_views(array, span))  # (views, dim)
                sims = np.einsum("vkd,vd->vk", centroids.vectors[:, rows], query)
                for v, view in enumerate(centroids.views):
                    predictions[view][span.id] = centroids.keys[rows[int(np.argmax(sims[v]))]]
                how["1nn"] += 1
            elif fallback is not None:
                for view in centroids.views:
                    predictions[view][span.id] = fallback
                how["mfs" if lp in mfs else "wordnet"] += 1
            else:
                how["none"] += 1
    return predictions, how
