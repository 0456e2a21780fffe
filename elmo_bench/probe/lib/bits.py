"""Conditional probing (Hewitt, Ethayarajh, Liang & Manning 2021): the V-information a representation R adds to a
baseline B about labels Y, I_V(R → Y | B) = H_V(Y | B) − H_V(Y | B, R), in bits per token.

Each H_V is the held-out cross-entropy (log base 2, averaged over the test tokens whose label occurs in training,
as the authors' ``report_v_entropy`` averages −log2 p(gold) over the labelled tokens) of a probe of family V
trained on that input. The family here is the converged softmax probe (elmo_bench.probe.lib.linear: standardised
dense features, full-batch L-BFGS to tolerance, one fixed L2 ``l2`` on the weights, the bias free): convex, so a
layer conditioned on itself gains ~0 bits, where an early-stopped probe gains from its optimiser's noise.

Inputs: dense features (a layer, or [B; R] concatenated, each standardised on train) and, for the ``word``
baseline, the word type as a learned lookup: logits = x W^T + E[word] + b, E (types + 1, classes) with one row
shared by every type unseen in training — the linear probe on a one-hot word identity, without building it.
The constant baseline (no input) is the training label distribution in closed form (``constant_bits``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch.nn import functional as F

from elmo_bench.probe.lib.linear import minimise

LOG2 = math.log(2.0)


@dataclass
class Vocabulary:
    """Training word types → rows 1..V; 0: every type unseen in training."""

    index: dict[str, int]

    @classmethod
    def of(cls, words: Sequence[str]) -> "Vocabulary":
        return cls({w: i + 1 for i, w in enumerate(sorted(set(words)))})

    def ids(self, words: Sequence[str]) -> torch.Tensor:
        return torch.tensor([self.index.get(w, 0) for w in words], dtype=torch.long)

    def __len__(self) -> int:
        return len(self.index) + 1


@dataclass
class LookupProbe:
    """A softmax probe over dense features (``weight``: (classes, dim), or None) and a word lookup (``table``:
    (types + 1, classes), or None), with ``bias`` (classes,)."""

    weight: torch.Tensor | None
    table: torch.Tensor | None
    bias: torch.Tensor
    converged: bool

    def logits(self, x: torch.Tensor | None, words: torch.Tensor | None) -> torch.Tensor:
        out = self.bias.expand(len(x) if x is not None else len(words), -1)
        if self.weight is not None:
            out = out + x @ self.weight.T
        if self.table is not None:
            out = out + self.table[words]
        return out

    def bits(self, x: torch.Tensor | None, words: torch.Tensor | None, y: torch.Tensor) -> np.ndarray:
        """−log2 p(y) per token (n,)."""
        logp = F.log_softmax(self.logits(x, words).double(), dim=-1)
        return (-logp.gather(1, y[:, None])[:, 0] / LOG2).numpy()

    def predict(self, x: torch.Tensor | None, words: torch.Tensor | None) -> torch.Tensor:
        return self.logits(x, words).argmax(-1)


def fit_lookup_softmax(x: torch.Tensor | None, words: torch.Tensor | None, y: torch.Tensor, num_classes: int,
                       vocabulary_size: int, l2: float, max_iter: int = 1000, tol: float = 1e-4) -> LookupProbe:
    """Minimise mean cross-entropy + l2/2 (||W||² + ||E||²) over (W, E, b) from zeros with full-batch L-BFGS.
    x (n, dim) float64 or None; words (n,) long or None; y (n,) long in [0, classes)."""
    n = len(y)
    params: list[torch.Tensor] = []
    weight = table = None
    if x is not None:
        weight = torch.zeros(num_classes, x.shape[1], dtype=torch.float64, requires_grad=True)
        params.append(weight)
    if words is not None:
        table = torch.zeros(vocabulary_size, num_classes, dtype=torch.float64, requires_grad=True)
        params.append(table)
    bias = torch.zeros(num_classes, dtype=torch.float64, requires_grad=True)
    params.append(bias)
    probe = LookupProbe(weight, table, bias, False)

    def loss() -> torch.Tensor:
        penalty = sum(p.pow(2).sum() for p in (weight, table) if p is not None)
        return F.cross_entropy(probe.logits(x, words), y) + 0.5 * l2 * penalty if n else bias.sum() * 0

    _, _, grad_norm = minimise(params, loss, max_iter, tol)
    return LookupProbe(*(p.detach() if p is not None else None for p in (weight, table)), bias.detach(),
                       grad_norm <= tol)


def constant_bits(train_y: np.ndarray, y: np.ndarray, num_classes: int) -> np.ndarray:
    """−log2 of each label's training frequency (the constant predictor: H_V(Y) with no input), per token."""
    counts = np.bincount(np.asarray(train_y, dtype=np.int64), minlength=num_classes).astype(np.float64)
    return -np.log2(counts[np.asarray(y, dtype=np.int64)] / counts.sum())


def per_sentence(values: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
    """Sums of ``values`` (tokens in sentence order) per sentence of ``lengths``."""
    ends = np.cumsum([0, *lengths])
    return np.array([values[a:b].sum() for a, b in zip(ends[:-1], ends[1:])], dtype=np.float64)


def bootstrap_gain(baseline: np.ndarray, joint: np.ndarray, tokens: np.ndarray, samples: int = 1000,
                   seed: int = 0) -> tuple[float, float]:
    """A paired bootstrap 95% interval of the gain (bits per token) over test sentences: per-sentence bit sums of
    the baseline and the joint probe and token counts (each (sentences,)), resampled together."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(tokens), size=(samples, len(tokens)))
    gains = (baseline[picks].sum(1) - joint[picks].sum(1)) / np.maximum(tokens[picks].sum(1), 1)
    low, high = np.percentile(gains, [2.5, 97.5])
    return float(low), float(high)
