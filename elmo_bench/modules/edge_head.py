"""The edge-probing head (Tenney et al. 2019; jiant v1's edge classifier): pooled span roles → MLP → one sigmoid per
label, trained with binary cross entropy over every (target, label) decision.

    words (batch, time, d) ──▶ per role: SpanPooling (project to 256, self-attentive pooling) ──▶ (batch, n, 256)
    concat over roles (batch, n, 256·roles) ──▶ Linear → tanh → LayerNorm → Dropout(0.3) → Linear ──▶ logits
    (batch, n, labels); sigmoid ≥ 0.5 predicts a label (elmo_bench.data.edge_task decodes)

``edge_targets`` makes the gold tensors of a batch of edge examples (elmo_bench.data.edge): spans padded with [0, 1)
under ``target_mask`` false, ``labels`` k-hot.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from elmo_bench.data.batch import Batch
from elmo_bench.modules.span_pooling import SpanPooling


class EdgeHead(nn.Module):
    """Gold spans of ``batch.targets`` → logits (batch, targets, labels), probabilities, loss."""

    def __init__(self, num_labels: int, input_dim: int, two_spans: bool, *, proj_dim: int, hidden_dim: int,
                 dropout: float) -> None:
        """``proj_dim``, ``hidden_dim``, ``dropout``: task.head (tasks/edge_head_config.py: 256, 256, 0.3, jiant's)."""
        super().__init__()
        if num_labels < 1 or input_dim < 1:
            raise ValueError(f"EdgeHead needs labels and inputs, found {num_labels} labels, width {input_dim}")
        roles = 2 if two_spans else 1
        self.roles = nn.ModuleList([SpanPooling(input_dim, proj_dim) for _ in range(roles)])
        self.mlp = nn.Sequential(nn.Linear(roles * proj_dim, hidden_dim), nn.Tanh(), nn.LayerNorm(hidden_dim),
                                 nn.Dropout(dropout), nn.Linear(hidden_dim, num_labels))

    def forward(self, batch: Batch) -> dict[str, torch.Tensor]:
        """The loss is the mean binary cross entropy over the real targets' label decisions (jiant's)."""
        words = batch.inputs("tokens")
        targets = batch.targets
        pooled = [role(words, targets[f"span{i + 1}"]) for i, role in enumerate(self.roles)]
        logits = self.mlp(torch.cat(pooled, dim=-1))                      # (batch, targets, labels)
        mask = targets["target_mask"]                                     # (batch, targets)
        out = {"logits": logits, "probabilities": torch.sigmoid(logits), "target_mask": mask}
        if "labels" in targets:
            if mask.any():
                out["loss"] = F.binary_cross_entropy_with_logits(logits[mask], targets["labels"][mask])
            else:
                out["loss"] = logits.sum() * 0.0
        return out


def edge_targets(examples: Sequence[Mapping[str, Any]], labels: Sequence[str], two_spans: bool,
                 device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """span1 [, span2] (batch, targets, 2) long, target_mask (batch, targets) bool, labels (batch, targets,
    labels) float k-hot (a label outside ``labels`` is left out: the run never saw it)."""
    index = {label: i for i, label in enumerate(labels)}
    most = max([1] + [len(ex["targets"]) for ex in examples])
    roles = ("span1", "span2") if two_spans else ("span1",)
    spans = {role: torch.tensor([[0, 1]], dtype=torch.long, device=device).repeat(len(examples), most, 1)
             for role in roles}
    mask = torch.zeros(len(examples), most, dtype=torch.bool, device=device)
    gold = torch.zeros(len(examples), most, len(labels), device=device)
    for b, ex in enumerate(examples):
        for n, target in enumerate(ex["targets"]):
            mask[b, n] = True
            for role in roles:
                spans[role][b, n] = torch.tensor(target[role], dtype=torch.long, device=device)
            for label in target["labels"]:
                if label in index:
                    gold[b, n, index[label]] = 1.0
    return {**spans, "target_mask": mask, "labels": gold}
