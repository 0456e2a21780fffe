"""ESIM (Chen et al. 2017), the ELMo paper's SNLI baseline, with ELMo at the encoder output when given.

Every step honours the masks so that padding a pair inside a larger batch never changes its logits:
packed BiLSTMs, masked softmax for the soft alignment, masked average and max pooling.
"""
from __future__ import annotations

import torch
from torch import nn

from elmo_bench.data.batch import Batch
from elmo_bench.modules.masked_rnn import MaskedBiRnn
from elmo_bench.modules.masked_softmax import masked_softmax

PREMISE, HYPOTHESIS = "premise", "hypothesis"


def masked_mean_max(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """x (batch, time, dim), mask (batch, time) → (batch, 2*dim): [average over real steps; max over real steps]."""
    m = mask.unsqueeze(-1)
    mean = (x * m.to(x.dtype)).sum(dim=1) / m.sum(dim=1).clamp(min=1).to(x.dtype)
    maxed = x.masked_fill(~m, torch.finfo(x.dtype).min).max(dim=1).values
    return torch.cat([mean, maxed], dim=-1)


class Esim(nn.Module):
    """ESIM head: encode, align, enhance, project, compose, pool, classify.

    forward(batch) → {"logits": (batch, num_classes), "loss": scalar if targets}.
    """

    def __init__(self, input_dim: int, elmo_output_dim: int = 0, *, hidden_dim: int, projection_dim: int | None,
                 mlp_dim: int | None, dropout: float, num_classes: int = 3) -> None:
        super().__init__()
        projection_dim = projection_dim or hidden_dim
        mlp_dim = mlp_dim or hidden_dim
        self.elmo_output_dim = elmo_output_dim
        self.dropout = nn.Dropout(dropout)
        self.encoder = MaskedBiRnn(input_dim, hidden_dim, "lstm")
        enc_dim = 2 * hidden_dim + elmo_output_dim
        # the enhancement [a; ã; a-ã; a*ã] followed by a ReLU feed-forward projection (Chen et al. eq. 16)
        self.projection = nn.Sequential(nn.Linear(4 * enc_dim, projection_dim), nn.ReLU())
        self.composition = MaskedBiRnn(projection_dim, hidden_dim, "lstm")
        self.classifier = nn.Sequential(
            nn.Dropout(dropout), nn.Linear(8 * hidden_dim, mlp_dim), nn.Tanh(),
            nn.Dropout(dropout), nn.Linear(mlp_dim, num_classes))

    def _encode(self, batch: Batch, name: str) -> tuple[torch.Tensor, torch.Tensor]:
        """→ mask (batch, time), encoding (batch, time, 2*hidden [+ elmo_output_dim]); ELMo is not dropped again."""
        mask = batch.mask(name)
        enc = self.encoder(batch.inputs(name, self.dropout), mask)
        elmo = batch.elmo_output(name, self.elmo_output_dim, "Esim")
        if elmo is not None:
            enc = torch.cat([enc, elmo * mask.unsqueeze(-1).to(enc.dtype)], dim=-1)
        return mask, enc

    def forward(self, batch: Batch) -> dict[str, torch.Tensor]:
        mask_a, a = self._encode(batch, PREMISE)                                # (batch, Ta, D)
        mask_b, b = self._encode(batch, HYPOTHESIS)                             # (batch, Tb, D)

        scores = torch.bmm(a, b.transpose(1, 2))                                # (batch, Ta, Tb)
        pair_mask = mask_a.unsqueeze(2) & mask_b.unsqueeze(1)                   # (batch, Ta, Tb)
        a_tilde = torch.bmm(masked_softmax(scores, pair_mask, dim=2), b)        # (batch, Ta, D)
        b_tilde = torch.bmm(masked_softmax(scores, pair_mask, dim=1).transpose(1, 2), a)  # (batch, Tb, D)

        m_a = torch.cat([a, a_tilde, a - a_tilde, a * a_tilde], dim=-1)         # (batch, Ta, 4D)
        m_b = torch.cat([b, b_tilde, b - b_tilde, b * b_tilde], dim=-1)
        v_a = self.composition(self.dropout(self.projection(m_a)), mask_a)      # (batch, Ta, 2*hidden)
        v_b = self.composition(self.dropout(self.projection(m_b)), mask_b)

        pooled = torch.cat([masked_mean_max(v_a, mask_a), masked_mean_max(v_b, mask_b)], dim=-1)  # (batch, 8*hidden)
        logits = self.classifier(pooled)                                        # (batch, num_classes)
        output = {"logits": logits}
        if "label" in batch.targets:
            output["loss"] = nn.functional.cross_entropy(logits, batch.targets["label"])
        return output
