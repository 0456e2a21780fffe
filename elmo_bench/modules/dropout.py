"""Variational (locked) dropout: one mask per sequence, shared over time (NER's BiLSTM inputs)."""
from __future__ import annotations

import torch
from torch import nn


class LockedDropout(nn.Module):
    """x (batch, time, dim) → x with the same units dropped at every time step of a sequence."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        keep = x.new_empty(x.size(0), 1, x.size(2)).bernoulli_(1 - self.p) / (1 - self.p)
        return x * keep
