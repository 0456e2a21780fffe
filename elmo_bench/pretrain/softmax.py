"""The LM softmax shared by both directions: full, or sampled as TensorFlow's ``sampled_softmax_loss`` does it.

Sampled softmax (Jean et al. 2015), as bilm-tf runs it with TF's defaults:

* candidates from the log-uniform (Zipfian) distribution over ids sorted by frequency,
  ``P(k) = (log(k + 2) - log(k + 1)) / log(V + 1)``, drawn *without replacement*: draws continue until
  ``num_sampled`` distinct ids are found, and ``num_tries`` counts every draw;
* the expected count of id k among the draws, ``Q(k) = 1 - (1 - P(k)) ** num_tries``, is subtracted in log
  space from every logit (true and sampled) so the estimate is unbiased;
* a sampled id equal to a row's own target (an accidental hit) is masked out of that row.

One set of candidates is drawn per step and shared by all rows (and by all DDP ranks: every rank's sampler has
the same seed and draws the same numbers).
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class LogUniformSampler:
    """Draws distinct candidate ids in [0, vocab) with P(k) ∝ log((k + 2) / (k + 1)); its state is checkpointable."""

    def __init__(self, vocab_size: int, seed: int = 0) -> None:
        self.vocab_size = vocab_size
        self.rng = np.random.default_rng(seed)
        self._log_range = math.log(vocab_size + 1)

    def probability(self, ids: torch.Tensor) -> torch.Tensor:
        ids = ids.double()
        return (torch.log(ids + 2) - torch.log(ids + 1)) / self._log_range

    def sample(self, num_sampled: int) -> tuple[np.ndarray, int]:
        """``num_sampled`` distinct ids in order of first draw, and the number of draws it took."""
        if num_sampled >= self.vocab_size:
            raise ValueError(f"num_sampled {num_sampled} must be below the vocabulary size {self.vocab_size}")
        draws = np.empty(0, dtype=np.int64)
        chunk = 2 * num_sampled
        while True:
            u = self.rng.random(chunk)
            # Inverse CDF of the log-uniform distribution: floor(exp(u * log(V + 1))) - 1.
            new = np.floor(np.exp(u * self._log_range)).astype(np.int64) - 1
            draws = np.concatenate([draws, np.clip(new, 0, self.vocab_size - 1)])
            unique, first = np.unique(draws, return_index=True)
            if len(unique) >= num_sampled:
                order = np.sort(first)[:num_sampled]
                return draws[order], int(order[-1]) + 1
            chunk *= 2

    def state(self) -> dict:
        return self.rng.bit_generator.state

    def set_state(self, state: dict) -> None:
        self.rng.bit_generator.state = state


class LMSoftmax(nn.Module):
    """weight (vocab, dim), bias (vocab,); ``loss(h, targets)`` = mean negative log-likelihood over rows."""

    def __init__(self, vocab_size: int, dim: int, num_sampled: int | None = None, seed: int = 0) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab_size, dim).normal_(0.0, 1.0 / math.sqrt(dim)))
        self.bias = nn.Parameter(torch.zeros(vocab_size))
        self.num_sampled = num_sampled if num_sampled and num_sampled < vocab_size else None
        self.sampler = LogUniformSampler(vocab_size, seed)

    def full_logits(self, h: torch.Tensor) -> torch.Tensor:
        """h (rows, dim) → (rows, vocab)."""
        return F.linear(h, self.weight, self.bias)

    def full_loss(self, h: torch.Tensor, targets: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
        return F.cross_entropy(self.full_logits(h), targets, reduction=reduction)

    def sampled_loss(self, h: torch.Tensor, targets: torch.Tensor, candidates: np.ndarray | None = None,
                     num_tries: int | None = None) -> torch.Tensor:
        """h (rows, dim), targets (rows,) → scalar mean sampled-softmax loss. Candidates are drawn here unless given."""
        if candidates is None:
            candidates, num_tries = self.sampler.sample(self.num_sampled)
        sampled = torch.as_tensor(candidates, device=h.device)
        tries = float(num_tries)

        def log_expected(ids: torch.Tensor) -> torch.Tensor:
            p = self.sampler.probability(ids)
            return torch.log(-torch.expm1(tries * torch.log1p(-p))).to(h.dtype)

        # one gather of the rows both terms need (one sparse-to-dense gradient in backward instead of two)
        ids = torch.cat([sampled, targets])
        rows, biases = F.embedding(ids, self.weight), self.bias[ids]
        k = len(sampled)
        true_logit = (h * rows[k:]).sum(-1) + biases[k:] - log_expected(targets)
        sampled_logits = F.linear(h, rows[:k], biases[:k]) - log_expected(sampled)
        hits = targets.unsqueeze(1) == sampled.unsqueeze(0)
        sampled_logits = sampled_logits.masked_fill(hits, torch.finfo(h.dtype).min)
        logits = torch.cat([true_logit.unsqueeze(1), sampled_logits], dim=1)
        return F.cross_entropy(logits, torch.zeros_like(targets))

    def loss(self, h: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Sampled when training with ``num_sampled`` set, full otherwise."""
        if self.training and self.num_sampled:
            return self.sampled_loss(h, targets)
        return self.full_loss(h, targets)
