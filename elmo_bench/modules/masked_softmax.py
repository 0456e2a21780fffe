"""Softmax that gives padded positions exactly zero weight."""
from __future__ import annotations

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax of ``scores`` over ``dim``; where ``mask`` (bool, broadcastable to scores) is False the weight is 0.

    A slice with no True entry gets all-zero weights (not NaN), so fully padded rows stay harmless.
    """
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=dim) * mask.to(scores.dtype)
