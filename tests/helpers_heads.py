"""Shared pieces of the task-head tests: padding masks from lengths and a short Adam run on a fixed batch."""
from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch import nn

from elmo_bench.data.batch import Batch


def lengths_mask(lengths: Sequence[int]) -> torch.Tensor:
    """(batch, max(lengths)) bool mask, True on the first lengths[b] steps of row b."""
    return torch.arange(max(lengths))[None] < torch.tensor(list(lengths))[:, None]


def train_losses(head: nn.Module, loss_fn: Callable[[], torch.Tensor], steps: int, lr: float) -> list[float]:
    """Run ``steps`` Adam steps on ``head``'s parameters; loss_fn computes the scalar loss of the fixed batch.

    Returns the loss seen at each step (before that step's update), for "the loss falls" assertions.
    """
    opt = torch.optim.Adam(head.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        assert loss.dim() == 0, f"the head's loss must be a scalar, got shape {tuple(loss.shape)}"
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def call(head: nn.Module, embedded, mask, elmo_out=None, chars=None, targets=None):
    """Run a head on per-field dicts (``embedded`` becomes the batch's word vectors: the head's dropout drops it)."""
    return head(Batch.of(embedded, mask, elmo_out=elmo_out, chars=chars, targets=targets))
