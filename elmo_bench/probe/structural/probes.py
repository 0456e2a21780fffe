"""Hewitt & Manning's structural probes and their training regimen (john-hewitt/structural-probes, read, not copied).

- distance probe: d(i, j) = ‖B(hᵢ − hⱼ)‖², B of shape (dim, rank) initialised U(−0.05, 0.05);
- depth probe: ‖Bhᵢ‖²;
- loss: L1 over all word pairs of a sentence divided by n² (distance), over its words divided by n (depth),
  averaged over the batch's sentences;
- regimen: Adam lr 1e-3; ReduceLROnPlateau(factor 0.1, patience 0, its default relative threshold 1e-4) stepped on
  the epoch's dev loss; the parameters are kept whenever the mean dev loss beats the best by more than 1e-4; training
  stops when 5 epochs in a row did not, or after ``max_epochs`` (40); batches of 20 sentences, the training set
  reshuffled every epoch (seeded); the kept (best-dev) parameters are the probe's.

The distance probe computes all squared distances from one Gram matrix (‖a‖² + ‖b‖² − 2a·b, clamped at 0)
instead of materialising every difference vector: the same function, O(n²·rank) memory less.
"""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch
from torch import nn

log = logging.getLogger(__name__)


class DistanceProbe(nn.Module):
    """(batch, n, dim) → (batch, n, n) squared distances ‖B(hᵢ − hⱼ)‖²."""

    def __init__(self, dim: int, rank: int) -> None:
        super().__init__()
        self.proj = nn.Parameter(torch.empty(dim, rank).uniform_(-0.05, 0.05))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x @ self.proj
        norms = (t * t).sum(-1)
        gram = t @ t.transpose(1, 2)
        return (norms.unsqueeze(2) + norms.unsqueeze(1) - 2.0 * gram).clamp_min(0.0)


class DepthProbe(nn.Module):
    """(batch, n, dim) → (batch, n) squared norms ‖Bhᵢ‖²."""

    def __init__(self, dim: int, rank: int) -> None:
        super().__init__()
        self.proj = nn.Parameter(torch.empty(dim, rank).uniform_(-0.05, 0.05))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x @ self.proj
        return (t * t).sum(-1)


def l1_loss(predicted: torch.Tensor, gold: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Mean over sentences of Σ|pred − gold| / nᵏ (k = 2 for (B, n, n) distances, 1 for (B, n) depths).

    ``gold`` holds −1 on padding, which is masked out."""
    mask = (gold != -1).to(predicted.dtype)
    per_sentence = ((predicted - gold).abs() * mask).flatten(1).sum(1)
    power = predicted.dim() - 1
    return (per_sentence / lengths.to(predicted.dtype) ** power).mean()


@dataclass
class Split:
    """One split of one layer: ``features[s]`` (n_s, dim) float32, ``labels[s]`` (n_s, n_s) or (n_s,) float32."""

    features: list[np.ndarray]
    labels: list[np.ndarray]

    def batch(self, index: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(B, n_max, dim) features, labels padded with −1, (B,) lengths."""
        lengths = torch.tensor([len(self.features[i]) for i in index])
        n = int(lengths.max())
        x = torch.zeros(len(index), n, self.features[index[0]].shape[1])
        pair = self.labels[index[0]].ndim == 2
        y = torch.full((len(index), n, n) if pair else (len(index), n), -1.0)
        for row, i in enumerate(index):
            k = len(self.features[i])
            x[row, :k] = torch.from_numpy(self.features[i])
            if pair:
                y[row, :k, :k] = torch.from_numpy(self.labels[i])
            else:
                y[row, :k] = torch.from_numpy(self.labels[i])
        return x, y, lengths


@dataclass
class Regimen:
    """The authors' schedule (see the module docstring); every number recorded in results."""

    lr: float = 1e-3
    batch_size: int = 20
    max_epochs: int = 40
    patience: int = 5
    min_improvement: float = 1e-4
    lr_factor: float = 0.1
    seed: int = 0
    history: list[dict[str, float]] = field(default_factory=list)


def split_loss(probe: nn.Module, split: Split, batch_size: int) -> float:
    """Mean per-sentence loss over a split (batches in order)."""
    probe.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(split.features), batch_size):
            index = list(range(start, min(start + batch_size, len(split.features))))
            x, y, lengths = split.batch(index)
            total += float(l1_loss(probe(x), y, lengths)) * len(index)
            count += len(index)
    return total / max(count, 1)


def train_probe(probe: nn.Module, train: Split, dev: Split, regimen: Regimen) -> nn.Module:
    """Train in place with the authors' regimen; returns the probe holding its best-dev parameters."""
    optimiser = torch.optim.Adam(probe.parameters(), lr=regimen.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimiser, mode="min", factor=regimen.lr_factor,
                                                           patience=0)
    generator = torch.Generator().manual_seed(regimen.seed)
    best, best_epoch, best_state = float("inf"), -1, copy.deepcopy(probe.state_dict())
    for epoch in range(regimen.max_epochs):
        probe.train()
        order = torch.randperm(len(train.features), generator=generator).tolist()
        train_total = 0.0
        for start in range(0, len(order), regimen.batch_size):
            index = order[start:start + regimen.batch_size]
            x, y, lengths = train.batch(index)
            optimiser.zero_grad()
            loss = l1_loss(probe(x), y, lengths)
            loss.backward()
            optimiser.step()
            train_total += float(loss.detach()) * len(index)
        dev_loss = split_loss(probe, dev, regimen.batch_size)
        scheduler.step(dev_loss)
        regimen.history.append({"epoch": epoch, "train_loss": train_total / len(order), "dev_loss": dev_loss})
        log.info("epoch %d train loss %.4f dev loss %.4f", epoch, train_total / len(order), dev_loss)
        if dev_loss < best - regimen.min_improvement:
            best, best_epoch, best_state = dev_loss, epoch, copy.deepcopy(probe.state_dict())
        elif best_epoch < epoch - (regimen.patience - 1):
            break
    probe.load_state_dict(best_state)
    return probe


def predict(probe: nn.Module, split: Split, batch_size: int = 20) -> list[np.ndarray]:
    """Each sentence's predictions, cut to its length: (n, n) distances or (n,) depths."""
    probe.eval()
    out: list[np.ndarray] = []
    with torch.no_grad():
        for start in range(0, len(split.features), batch_size):
            index = list(range(start, min(start + batch_size, len(split.features))))
            x, _, lengths = split.batch(index)
            predicted = probe(x).numpy()
            for row, k in enumerate(lengths.tolist()):
                out.append(predicted[row, :k, :k] if predicted.ndim == 3 else predicted[row, :k])
    return out
