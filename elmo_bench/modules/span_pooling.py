"""One span role of an edge probe (Tenney et al. 2019): a per-word projection, then self-attentive span pooling.

Each role (span1, span2) has its own projection and its own pooling, so a relation's two ends are read differently.
Pooling (Lee et al. 2017's head-finding attention, as AllenNLP's self-attentive span extractor): one score per
projected word, a softmax over the words inside the span, and the span vector is the weighted sum of the span's
projected words. A one-word span is therefore exactly its projected word.
"""
from __future__ import annotations

import torch
from torch import nn


class SpanPooling(nn.Module):
    """words (batch, time, input_dim), spans (batch, targets, 2) half-open [start, end) → (batch, targets, proj_dim)."""

    def __init__(self, input_dim: int, proj_dim: int = 256) -> None:
        super().__init__()
        self.project = nn.Linear(input_dim, proj_dim)   # jiant: a width-1 convolution, the same map per word
        self.score = nn.Linear(proj_dim, 1)

    def forward(self, words: torch.Tensor, spans: torch.Tensor) -> torch.Tensor:
        """Padding targets may hold any span inside the sentence (e.g. [0, 1)): the caller masks their outputs."""
        projected = self.project(words)                                   # (batch, time, proj)
        scores = self.score(projected).squeeze(-1)                        # (batch, time)
        positions = torch.arange(words.shape[1], device=words.device)    # (time,)
        start, end = spans[..., 0:1], spans[..., 1:2]                     # (batch, targets, 1)
        inside = (positions >= start) & (positions < end)                 # (batch, targets, time)
        logits = scores.unsqueeze(1).masked_fill(~inside, float("-inf"))  # (batch, targets, time)
        weights = torch.softmax(logits, dim=-1).nan_to_num(0.0)           # an empty span: all zeros
        return torch.einsum("bnt,btd->bnd", weights, projected)
