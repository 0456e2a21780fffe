"""Probe statistics accumulated batch by batch over the extraction, so a closed-form probe (``probe=ridge``) or an
eraser (LEACE, ``probe=erasure``) is fitted without holding a layer's (tokens, dim) training matrix: a large model's
layers over all of UD EWT train are tens of GB, their moments a few d x d matrices.

- :func:`token_batches` walks a split's layer source (the activation cache's entry, or live layers with
  ``cache=false``) sentence by sentence and yields the probed layers of at most ``batch_tokens`` tokens at a time
  (a longer sentence alone), in sentence order, with the offset of the batch's first token (to slice labels).
- :class:`Moments` holds n, the means of x and of the one-hot labels, the centred scatter Σ (x − x̄)(x − x̄)ᵀ and
  the centred cross-products Σ (x − x̄)(y − ȳ)ᵀ, merged batch by batch with the pairwise update of Chan, Golub
  and LeVeque (1979): centred sums never subtract two large uncentred ones, so one update over every token (the
  gathered matrix, ``probe.stream=false``) and many small ones agree to rounding (float64).
Torch-free (numpy only).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np

#: tokens per streamed batch by default (``probe.batch_tokens``): the activation cache's own batch bound
BATCH_TOKENS = 4096


def _stacked(pending: list[np.ndarray]) -> np.ndarray:
    """Sentences' (P, n_i, dim) arrays → (Σ n_i, P, dim) in the source's dtype (float32: the consumers widen one
    layer at a time, so a batch of every probed layer is held once, at half the bytes)."""
    return np.concatenate([a.transpose(1, 0, 2) for a in pending], axis=0)


def token_batches(source: Any, count: int, positions: Sequence[int], batch_tokens: int = BATCH_TOKENS
                  ) -> Iterator[tuple[int, np.ndarray]]:
    """(offset of the first token, (tokens, len(positions), dim)) over sentences 0..count−1 of ``source``
    (``get(i)`` → (layers, n_i, dim)), at most ``batch_tokens`` tokens a batch unless one sentence is longer."""
    chosen = list(positions)
    pending: list[np.ndarray] = []
    rows = start = 0
    for i in range(count):
        layers = np.asarray(source.get(i))[chosen]
        if pending and rows + layers.shape[1] > batch_tokens:
            yield start, _stacked(pending)
            start, pending, rows = start + rows, [], 0
        pending.append(layers)
        rows += layers.shape[1]
    if rows:
        yield start, _stacked(pending)


def layer_matrix(source: Any, count: int, position: int) -> np.ndarray:
    """One layer's (tokens, dim) float64 matrix of sentences 0..count−1 (what a probe that needs the matrix, such
    as erasure's scoring probe, reads one layer at a time)."""
    rows = [np.asarray(source.get(i))[position] for i in range(count)]
    return np.concatenate(rows, axis=0).astype(np.float64) if rows else np.zeros((0, 1))


@dataclass
class Moments:
    """Centred first and second moments of x (dim,) and of the one-hot of a label id in 0..classes−1."""

    dim: int
    classes: int
    n: int = 0
    mean_x: np.ndarray = field(init=False)
    mean_y: np.ndarray = field(init=False)
    scatter: np.ndarray = field(init=False)      # Σ (x − x̄)(x − x̄)ᵀ, (dim, dim)
    cross: np.ndarray = field(init=False)        # Σ (x − x̄)(y − ȳ)ᵀ, (dim, classes)
    largest_batch: int = 0                       # the most rows one update saw (the streamed bound, recorded)

    def __post_init__(self) -> None:
        self.mean_x = np.zeros(self.dim)
        self.mean_y = np.zeros(self.classes)
        self.scatter = np.zeros((self.dim, self.dim))
        self.cross = np.zeros((self.dim, self.classes))

    def update(self, x: np.ndarray, labels: np.ndarray) -> None:
        """Add the rows of ``x`` (b, dim) with their label ids ``labels`` (b,), each in 0..classes−1."""
        b = int(x.shape[0])
        if b == 0:
            return
        x = np.asarray(x, dtype=np.float64)
        y = np.zeros((b, self.classes))
        y[np.arange(b), labels] = 1.0
        mean_x, mean_y = x.mean(axis=0), y.mean(axis=0)
        centred = x - mean_x
        scatter, cross = centred.T @ centred, centred.T @ (y - mean_y)
        total = self.n + b
        dx, dy = mean_x - self.mean_x, mean_y - self.mean_y
        weight = self.n * b / total
        self.scatter += scatter + weight * np.outer(dx, dx)
        self.cross += cross + weight * np.outer(dx, dy)
        self.mean_x += dx * (b / total)
        self.mean_y += dy * (b / total)
        self.n = total
        self.largest_batch = max(self.largest_batch, b)
