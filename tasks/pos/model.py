"""The probe head: one linear map from a token's representation to its tag, nothing else.

A linear probe measures what a frozen layer encodes linearly (paper section 5.3, Table 6): any hidden layer here would
learn features of its own and blur the comparison between biLM layers.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from elmo_bench.data.batch import Batch
from elmo_bench.modules.labels import IGNORE


class LinearTagger(nn.Module):
    """embedded["tokens"] (batch, time, input_dim) [⊕ elmo_out (batch, time, elmo_dim)] → logits (batch, time, tags)."""

    def __init__(self, num_tags: int, input_dim: int, elmo_output_dim: int = 0, *, bias: bool) -> None:
        super().__init__()
        if num_tags < 1 or input_dim + elmo_output_dim < 1:
            raise ValueError(f"LinearTagger needs tags and inputs, found {num_tags} tags, width {input_dim}+{elmo_output_dim}")
        self.proj = nn.Linear(input_dim + elmo_output_dim, num_tags, bias=bias)

    def forward(self, batch: Batch) -> dict[str, torch.Tensor]:
        """Returns logits (batch, time, tags), predicted (batch, time) with -1 at padding, and the loss: cross
        entropy averaged over the real tokens of the batch (tokens, not sentences: long sentences weigh more, as
        every tagged word is one probe example)."""
        inputs = batch.inputs("tokens")
        extra = batch.fields["tokens"].elmo_out
        if extra is not None:
            inputs = torch.cat([inputs, extra], dim=-1)
        logits = self.proj(inputs)
        token_mask = batch.mask("tokens")
        predicted = logits.argmax(-1).masked_fill(~token_mask, -1)
        out = {"logits": logits, "predicted": predicted, "mask": token_mask}
        targets = batch.targets
        if "tags" in targets:
            gold = targets["tags"].masked_fill(~token_mask, IGNORE)
            if (gold != IGNORE).any():
                out["loss"] = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), gold.reshape(-1), ignore_index=IGNORE)
            else:
                out["loss"] = logits.sum() * 0.0
        return out
