"""The structural probes' metrics, as Hewitt & Manning's reporter defines them (numpy only, no torch).

- UUAS: per sentence, the minimum spanning tree of the predicted distances over the non-punctuation words, against
  the minimum spanning tree of the gold tree distances over the same words (the authors compute the gold edges that
  way too, so a punctuation word inside the tree does not leave the gold side short of edges); edges compared
  unordered; micro-averaged: correct edges over gold edges of the whole split. The spanning tree is Kruskal's over
  every ordered pair (i, j) in row-major order, stably sorted by distance, as the authors' ``prims_matrix_to_edges``.
- DSpr: for every word, the Spearman correlation of its row of predicted distances against its gold row (all words,
  punctuation included); averaged over the sentences of each length, then over the lengths 5..50 that occur.
- NSpr: per sentence the Spearman correlation of predicted against gold depths; the same two-stage average.
- root accuracy: the share of sentences whose non-punctuation word of smallest predicted depth is the gold root (all
  words punctuation: the plain argmin).

UUAS and root accuracy come as ``Scored(value, count)``: a split without a gold edge (every sentence one word or
punctuation) has nothing to score, so its value is None with the count 0, never UUAS 0.0 or root accuracy 100.0
(issue 45). Where there is something to score the value is the authors' number, unchanged.

Departure, recorded: scipy's Spearman of a constant row is NaN, which would make a whole average NaN; here it is
0 (no rank information). Nothing changes for non-constant predictions.
"""
from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple, Sequence

import numpy as np

#: Hewitt & Manning's punctuation XPOS tags (PTB): excluded from the spanning trees and from root accuracy
PUNCT_XPOS = ("''", ",", ".", ":", "``", "-LRB-", "-RRB-")
SPEARMAN_LENGTHS = (5, 50)


def punctuation(xpos: Sequence[str], upos: Sequence[str], mode: str = "xpos") -> np.ndarray:
    """(n,) bool: which words are punctuation (``xpos``: the authors' PTB list; ``upos``: UPOS ``PUNCT``)."""
    if mode == "xpos":
        return np.array([t in PUNCT_XPOS for t in xpos], dtype=bool)
    if mode == "upos":
        return np.array([t == "PUNCT" for t in upos], dtype=bool)
    raise ValueError(f"punctuation mode expected xpos or upos, found {mode!r}")


def tree_distances(heads: Sequence[int]) -> np.ndarray:
    """(n, n) path lengths in the tree given by ``heads`` (1-based, 0 = root), by breadth-first search per word."""
    n = len(heads)
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for child, head in enumerate(heads):
        if head:
            neighbours[child].append(head - 1)
            neighbours[head - 1].append(child)
    out = np.zeros((n, n), dtype=np.float32)
    for start in range(n):
        seen = {start: 0}
        frontier = [start]
        while frontier:
            nxt = []
            for node in frontier:
                for other in neighbours[node]:
                    if other not in seen:
                        seen[other] = seen[node] + 1
                        nxt.append(other)
            frontier = nxt
        for node, d in seen.items():
            out[start, node] = d
    return out


def mst_edges(matrix: np.ndarray, keep: np.ndarray) -> set[tuple[int, int]]:
    """Unordered edges (i < j) of the minimum spanning tree of ``matrix`` (n, n) over the words where ``keep``."""
    words = np.flatnonzero(keep)
    if len(words) < 2:
        return set()
    sub = np.asarray(matrix, dtype=np.float64)[np.ix_(words, words)]
    order = np.argsort(sub.ravel(), kind="stable")
    parent = list(range(len(words)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    edges: set[tuple[int, int]] = set()
    m = len(words)
    for flat in order:
        a, b = divmod(int(flat), m)
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
            i, j = int(words[a]), int(words[b])
            edges.add((min(i, j), max(i, j)))
            if len(edges) == m - 1:
                break
    return edges


def uuas_counts(predicted: np.ndarray, gold: np.ndarray, punct: np.ndarray) -> tuple[int, int]:
    """(correct, total) edges of one sentence: predicted and gold (n, n) distances, ``punct`` (n,) bool."""
    gold_edges = mst_edges(gold, ~punct)
    return len(gold_edges & mst_edges(predicted, ~punct)), len(gold_edges)


def linear_chain(n: int) -> np.ndarray:
    """(n, n) |i - j|: its spanning tree over any word subset is the chain of neighbouring kept words."""
    index = np.arange(n, dtype=np.float32)
    return np.abs(index[:, None] - index[None, :])


class Scored(NamedTuple):
    """A metric over a split and the size of its denominator: ``value`` None when that is 0 (nothing to score)."""

    value: float | None
    count: int


def uuas(predicted: Sequence[np.ndarray], gold: Sequence[np.ndarray], punct: Sequence[np.ndarray]) -> Scored:
    """Micro-averaged UUAS in percent over a split, with the gold edges it counts (None without any: 0.0 would
    read as a probe that found no edge)."""
    correct = total = 0
    for p, g, mask in zip(predicted, gold, punct):
        c, t = uuas_counts(p, g, mask)
        correct += c
        total += t
    return Scored(100.0 * correct / total if total else None, total)


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean of their positions), as scipy's ``rankdata``."""
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2.0)[inverse]


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho of two 1-d arrays; 0 when either is constant (see the module note)."""
    ra, rb = _ranks(np.asarray(a, dtype=np.float64)), _ranks(np.asarray(b, dtype=np.float64))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / denom) if denom > 0 else 0.0


def length_averaged(per_length: dict[int, list[float]]) -> float | None:
    """Mean over lengths 5..50 of the per-length means; None when no sentence has such a length."""
    lo, hi = SPEARMAN_LENGTHS
    means = [float(np.mean(v)) for n, v in per_length.items() if lo <= n <= hi and v]
    return float(np.mean(means)) if means else None


def dspr(predicted: Sequence[np.ndarray], gold: Sequence[np.ndarray]) -> float | None:
    """Distance Spearman: every word's row, averaged per sentence length, then over lengths 5..50."""
    per_length: dict[int, list[float]] = defaultdict(list)
    for p, g in zip(predicted, gold):
        per_length[len(g)].extend(spearman(p[i], g[i]) for i in range(len(g)))
    return length_averaged(per_length)


def nspr(predicted: Sequence[np.ndarray], gold: Sequence[np.ndarray]) -> float | None:
    """Norm (depth) Spearman: one value per sentence, averaged per length, then over lengths 5..50."""
    per_length: dict[int, list[float]] = defaultdict(list)
    for p, g in zip(predicted, gold):
        per_length[len(g)].append(spearman(p, g))
    return length_averaged(per_length)


def root_accuracy(predicted: Sequence[np.ndarray], gold: Sequence[np.ndarray], punct: Sequence[np.ndarray]
                  ) -> Scored:
    """Percent of sentences whose shallowest predicted non-punctuation word has gold depth 0 (over every sentence,
    as the authors' reporter), with the count of sentences that had a root to choose (two or more non-punctuation
    words, i.e. a gold edge): None when none had, since a one-word sentence is right whatever the probe says."""
    correct = choices = 0
    for p, g, mask in zip(predicted, gold, punct):
        p = np.asarray(p, dtype=np.float64)
        guess = int(np.argmin(np.where(mask, np.inf, p))) if not mask.all() else int(np.argmin(p))
        correct += int(g[guess] == 0)
        choices += int((~np.asarray(mask, dtype=bool)).sum() >= 2)
    return Scored(100.0 * correct / len(gold) if choices else None, choices)
