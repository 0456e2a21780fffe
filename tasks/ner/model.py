"""NER head after Peters et al. (2017) and the ELMo paper's NER model.

    chars (batch, time, 50) ─char embedding─▶ CNN (width w, ReLU) ─max over chars─▶ (batch, time, filters)
    [variational dropout(GloVe ; char features) ; ELMo_in] ─▶ BiLSTM 1 ─variational dropout─▶ BiLSTM 2
    [dropout(BiLSTM output) ; ELMo_out (when ELMo is placed at the output)] ─▶ linear ─▶ emissions ─▶ CRF
ELMo columns were dropped once by the ELMo module (elmo_bench.modules.elmo.Elmo) and are not dropped here again.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch
from torch import nn

from elmo_bench.data.batch import Batch
from elmo_bench.modules.bio import bio_constraints
from elmo_bench.modules.char_cnn import CharCnn
from elmo_bench.modules.dropout import LockedDropout
from elmo_bench.modules.masked_rnn import MaskedBiRnn
from elmo_bench.tasks.ner.crf import CRF


class NerHead(nn.Module):
    """Char CNN + word input → stacked BiLSTMs → linear → CRF. forward returns loss / emissions / predictions."""

    def __init__(
        self,
        labels: Sequence[str],
        input_dim: int,
        elmo_output_dim: int = 0,
        *,
        char_dim: int,  # these six: tasks/ner/config.py HeadConfig (their one source)
        char_filters: int,
        char_width: int,
        lstm_hidden: Sequence[int],
        dropout: float,
        constrain_decoding: bool,
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

    def forward(self, batch: Batch) -> dict[str, Any]:
        """batch.fields[f]: words (batch, time, glove_dim), elmo_in / elmo_out (batch, time, elmo_dim), chars
        (batch, time, 50), mask (batch, time); targets["tags"] (batch, time) → {"loss", "emissions", "mask",
        "predicted" (eval mode only: (batch, time) Viterbi tag ids, -1 at padding)}."""
        f = self.field
        m = batch.mask(f)
        extra = [self.char_cnn(batch.chars(f, "NER head"))] if self.char_cnn is not None else []
        h = batch.inputs(f, self.input_dropout, extra)  # GloVe and chars dropped here, ELMo once upstream
        for k, lstm in enumerate(self.lstms):
            h = lstm(h if k == 0 else self.input_dropout(h), m)
        parts = [self.output_dropout(h)]
        e = batch.elmo_output(f, self.elmo_output_dim, "NER head")
        if e is not None:
            parts.append(e)
        emissions = self.proj(torch.cat(parts, dim=-1))  # (batch, time, n_labels)
        out: dict[str, Any] = {"emissions": emissions, "mask": m}
        targets = batch.targets
        if "tags" in targets:
            out["loss"] = -self.crf.log_likelihood(emissions, targets["tags"], m).mean()
        if not self.training:
            paths = self.crf.viterbi(emissions, m, constrained=self.constrain_decoding)
            predicted = torch.full(m.shape, -1, dtype=torch.long, device=m.device)
            for b, path in enumerate(paths):
                predicted[b, : len(path)] = torch.tensor(path, dtype=torch.long, device=m.device)
            out["predicted"] = predicted
        return out
