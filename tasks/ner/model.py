"""NER head after Peters et al. (2017) and the ELMo paper's NER model.

    chars (batch, time, 50) ─char embedding─▶ CNN (width w, ReLU) ─max over chars─▶ (batch, time, filters)
    [embedded[tokens] ; char features] ─variational dropout─▶ BiLSTM 1 ─variational dropout─▶ BiLSTM 2
    [BiLSTM output ; elmo_out (when ELMo is placed at the output)] ─dropout─▶ linear ─▶ emissions ─▶ CRF
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import torch
from torch import nn

from elmo_bench.modules.char_cnn import CharCnn
from elmo_bench.modules.masked_rnn import MaskedBiRnn
from tasks.ner.crf import CRF, bio_constraints


class LockedDropout(nn.Module):
    """Variational dropout: one mask per sequence, shared over time. x (batch, time, dim)."""

    def __init__(self, p: float):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        keep = x.new_empty(x.size(0), 1, x.size(2)).bernoulli_(1 - self.p) / (1 - self.p)
        return x * keep


class NerHead(nn.Module):
    """Char CNN + word input → stacked BiLSTMs → linear → CRF. forward returns loss / emissions / predictions."""

    def __init__(
        self,
        labels: Sequence[str],
        input_dim: int,
        elmo_output_dim: int = 0,
        char_dim: int = 16,
        char_filters: int = 128,
        char_width: int = 3,
        lstm_hidden: Sequence[int] = (200, 100),
        dropout: float = 0.5,
        constrain_decoding: bool = True,
        field: str = "tokens",
    ):
        super().__init__()
        self.labels = list(labels)
        self.field = field
        self.char_cnn = CharCnn(char_dim, char_filters, char_width, padding="same") if char_filters > 0 else None
        dim = input_dim + (char_filters if self.char_cnn is not None else 0)
        self.input_dropout = LockedDropout(dropout)
        self.lstms = nn.ModuleList()
        for hidden in lstm_hidden:
            self.lstms.append(MaskedBiRnn(dim, hidden, "lstm"))
            dim = 2 * hidden
        self.elmo_output_dim = elmo_output_dim
        self.output_dropout = nn.Dropout(dropout)
        self.proj = nn.Linear(dim + elmo_output_dim, len(self.labels))
        self.crf = CRF(len(self.labels), bio_constraints(self.labels))
        self.constrain_decoding = constrain_decoding

    def forward(
        self,
        embedded: Mapping[str, torch.Tensor],
        mask: Mapping[str, torch.Tensor],
        elmo_out: Optional[Mapping[str, Optional[torch.Tensor]]] = None,
        chars: Optional[Mapping[str, Optional[torch.Tensor]]] = None,
        targets: Optional[Mapping[str, torch.Tensor]] = None,
    ) -> dict[str, Any]:
        """embedded[f] (batch, time, input_dim), mask[f] (batch, time) bool, chars[f] (batch, time, 50),
        elmo_out[f] (batch, time, elmo_output_dim), targets["tags"] (batch, time) → {"loss", "emissions", "mask",
        "predicted" (eval mode only: (batch, time) Viterbi tag ids, -1 at padding)}."""
        f = self.field
        x, m = embedded[f], mask[f]
        parts = [x]
        if self.char_cnn is not None:
            c = (chars or {}).get(f)
            if c is None:
                raise ValueError(f"NER head: char_filters > 0 but no chars[{f!r}] were given")
            parts.append(self.char_cnn(c))
        h = torch.cat(parts, dim=-1)
        for lstm in self.lstms:
            h = lstm(self.input_dropout(h), m)
        if self.elmo_output_dim:
            e = (elmo_out or {}).get(f)
            if e is None:
                raise ValueError(f"NER head: built with elmo_output_dim={self.elmo_output_dim} but elmo_out[{f!r}] is missing")
            h = torch.cat([h, e], dim=-1)
        emissions = self.proj(self.output_dropout(h))  # (batch, time, n_labels)
        out: dict[str, Any] = {"emissions": emissions, "mask": m}
        if targets and "tags" in targets:
            out["loss"] = -self.crf.log_likelihood(emissions, targets["tags"], m).mean()
        if not self.training:
            paths = self.crf.viterbi(emissions, m, constrained=self.constrain_decoding)
            predicted = torch.full(m.shape, -1, dtype=torch.long, device=m.device)
            for b, path in enumerate(paths):
                predicted[b, : len(path)] = torch.tensor(path, dtype=torch.long)
            out["predicted"] = predicted
        return out
