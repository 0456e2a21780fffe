"""BCN, the biattentive classification network (McCann et al. 2017), in the ELMo paper's variant.

    [dropout(GloVe) ; ELMo_in] (batch, time, d_in) ─▶ ReLU feed-forward ─▶ encoder BiLSTM ─▶ X (batch, time, 2h)
    biattention of X with itself: A = softmax_keys(X Xᵀ) (batch, time, time), X̃ = A X
    integrator BiLSTM over [X ; X - X̃ ; X ⊙ X̃ (; elmo_out when ELMo is at the output)] ─▶ H (batch, time, 2k)
    pool H over time: max, min, mean, self-attentive ─▶ (batch, 8k) ─dropout─▶ ReLU feed-forward ─▶ linear ─▶ logits

The paper replaces McCann et al.'s maxout layers with ReLU feed-forward layers. Padding never changes the logits:
both LSTMs run on packed sequences, attention ignores padded keys, and every pooling masks padded steps.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from elmo_bench.data.batch import Batch
from elmo_bench.modules.masked_rnn import MaskedBiRnn
from elmo_bench.modules.masked_softmax import masked_softmax


class BCN(nn.Module):
    """forward(batch) → {"logits" (batch, n_classes), "loss" with targets}."""

    def __init__(
        self,
        input_dim: int,
        elmo_output_dim: int = 0,
        n_classes: int = 5,
        *,
        pre_encode_dim: int,  # these eight: tasks/sst/config.py HeadConfig (their one source)
        encoder_hidden: int,
        integrator_hidden: int,
        output_dims: Sequence[int],
        embedding_dropout: float,
        pre_encode_dropout: float,
        integrator_dropout: float,
        output_dropout: float,
        field: str = "tokens",
    ):
        super().__init__()
        self.field = field
        self.elmo_output_dim = elmo_output_dim
        self.embedding_dropout = nn.Dropout(embedding_dropout)
        self.pre_encode = nn.Sequential(nn.Linear(input_dim, pre_encode_dim), nn.ReLU(), nn.Dropout(pre_encode_dropout))
        self.encoder = MaskedBiRnn(pre_encode_dim, encoder_hidden, "lstm")
        self.integrator = MaskedBiRnn(6 * encoder_hidden + elmo_output_dim, integrator_hidden, "lstm")
        self.self_attentive = nn.Linear(2 * integrator_hidden, 1)
        self.integrator_dropout = nn.Dropout(integrator_dropout)
        layers: list[nn.Module] = []
        dim = 8 * integrator_hidden
        for out_dim in output_dims:
            layers += [nn.Linear(dim, out_dim), nn.ReLU(), nn.Dropout(output_dropout)]
            dim = out_dim
        layers.append(nn.Linear(dim, n_classes))
        self.output = nn.Sequential(*layers)

    def forward(self, batch: Batch) -> dict[str, Any]:
        """batch.fields[f]: words (batch, time, d_glove), elmo_in / elmo_out (batch, time, elmo_dim), mask
        (batch, time); targets["label"] (batch,) → {"logits": (batch, n_classes), "loss": mean cross-entropy}."""
        f = self.field
        m = batch.mask(f)
        x = self.pre_encode(batch.inputs(f, self.embedding_dropout))  # ELMo_in dropped once upstream
        encoded = self.encoder(x, m)  # (batch, time, 2h)
        weights = masked_softmax(encoded @ encoded.transpose(1, 2), m.unsqueeze(1))  # (batch, time, time)
        attended = weights @ encoded
        parts = [encoded, encoded - attended, encoded * attended]
        e = batch.elmo_output(f, self.elmo_output_dim, "BCN")
        if e is not None:
            parts.append(e)
        integrated = self.integrator(torch.cat(parts, dim=-1), m)  # (batch, time, 2k)
        m3 = m.unsqueeze(2)
        big = torch.finfo(integrated.dtype).max / 4
        max_pool = integrated.masked_fill(~m3, -big).max(dim=1).values
        min_pool = integrated.masked_fill(~m3, big).min(dim=1).values
        mean_pool = (integrated * m3).sum(1) / m3.sum(1).clamp(min=1)
        self_weights = masked_softmax(self.self_attentive(integrated).squeeze(2), m)  # (batch, time)
        self_pool = (self_weights.unsqueeze(2) * integrated).sum(1)
        pooled = self.integrator_dropout(torch.cat([max_pool, min_pool, mean_pool, self_pool], dim=-1))
        logits = self.output(pooled)
        out: dict[str, Any] = {"logits": logits}
        if "label" in batch.targets:
            out["loss"] = F.cross_entropy(logits, batch.targets["label"])
        return out
