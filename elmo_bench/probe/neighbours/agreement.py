"""Sense agreement@k: for a query context, the share of its k nearest contexts (cosine; same lemma and pos, other
sentences) that carry the query's WordNet sense (a word tagged with several keys agrees with one sharing any).

Ties are expected, not broken: a context-free view (GloVe, a token layer) gives every use of one word form the same
vector, so its "k nearest" are any k of the tied ones. Agreement then counts the contexts strictly nearer than the
k-th nearest similarity in full and fills the remaining places with the tied contexts' share of the query's
sense, the expectation over every way of breaking the tie. A view that gives all contexts of a word one vector
thus scores exactly the **sense prior**: the share of a query's candidate contexts that carry its sense, the chance
that two uses of the word share a sense (averaged over query contexts). ``most_frequent_sense`` is the share of
query contexts tagged with their group's most frequent sense, the usual WSD baseline, printed beside it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from elmo_bench.probe.lib.bits import bootstrap_gain
from elmo_bench.probe.neighbours.contexts import Group

#: two cosines this close are one tie (identical vectors may round differently in a matrix product)
TIE = 1e-9


def normalised(vectors: np.ndarray) -> np.ndarray:
    """Rows of unit length (a zero row stays zero: cosine 0 with everything)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    norm = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norm > 0, norm, 1.0)


def agreement_at_k(similarities: np.ndarray, agrees: np.ndarray, k: int) -> float:
    """The expected share of the k most similar candidates that agree, ties at the k-th similarity shared out."""
    k = min(k, len(similarities))
    kth = np.sort(similarities)[::-1][k - 1]
    above = similarities > kth + TIE
    tied = np.abs(similarities - kth) <= TIE
    hits = agrees[above].sum() + (k - above.sum()) * agrees[tied].mean()
    return float(hits / k)


def shares_sense(group: Group) -> np.ndarray:
    """(N, N): context i and j share a sense key."""
    keys = [set(c.keys) for c in group.contexts]
    return np.array([[bool(a & b) for b in keys] for a in keys])


def candidates(group: Group) -> np.ndarray:
    """(N, N): context j is in another sentence than context i (so never i itself)."""
    sentences = np.array([c.sentence for c in group.contexts])
    return sentences[:, None] != sentences[None, :]


@dataclass
class ViewScores:
    """Per query context of one group in one view: agreement@k and its nearest candidate (index, cosine)."""

    agreement: np.ndarray
    nearest: np.ndarray
    similarity: np.ndarray


def score_view(vectors: np.ndarray, same: np.ndarray, other: np.ndarray, k: int) -> ViewScores:
    """Agreement@k of each context of one group (``vectors`` (N, dim)) against its candidates ``other``."""
    unit = normalised(vectors)
    cosine = unit @ unit.T
    n = len(unit)
    agreement, nearest, similarity = np.empty(n), np.empty(n, dtype=np.int64), np.empty(n)
    for i in range(n):
        where = np.flatnonzero(other[i])
        agreement[i] = agreement_at_k(cosine[i, where], same[i, where], k)
        best = int(np.argmax(cosine[i, where]))
        nearest[i], similarity[i] = where[best], cosine[i, where[best]]
    return ViewScores(agreement, nearest, similarity)


def sense_prior(same: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Per query context: the share of its candidates that carry its sense (what a context-free view scores)."""
    return np.array([same[i, other[i]].mean() for i in range(len(same))])


def most_frequent_sense(group: Group) -> np.ndarray:
    """Per query context: 1.0 when it is tagged with its group's most frequent sense."""
    key = group.most_frequent_key()
    return np.array([float(key in c.keys) for c in group.contexts])


def interval(values: Sequence[float], seed: int, samples: int = 1000) -> tuple[float, float]:
    """A bootstrap 95% interval of the mean over query contexts (bits.bootstrap_gain with each context one unit
    and a zero baseline to subtract: its resampled mean)."""
    values = np.asarray(values, dtype=np.float64)
    return bootstrap_gain(values, np.zeros_like(values), np.ones_like(values), samples, seed)
