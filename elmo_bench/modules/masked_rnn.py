"""A one-layer bidirectional LSTM or GRU that honours a padding mask."""
from __future__ import annotations

from typing import Literal

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

CELLS = {"lstm": nn.LSTM, "gru": nn.GRU}


class MaskedBiRnn(nn.Module):
    """One-layer BiLSTM / BiGRU run on packed sequences.

    Packing makes the backward direction start at each row's last real step, so padding (whatever it holds) never
    reaches a real position: a sequence gives the same states alone or padded inside a larger batch.
    The wrapped ``torch.nn`` module is ``self.rnn``.
    """

    def __init__(self, input_dim: int, hidden_dim: int, cell: Literal["lstm", "gru"] = "lstm") -> None:
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"MaskedBiRnn: cell must be one of {sorted(CELLS)}, got {cell!r}")
        self.rnn = CELLS[cell](input_dim, hidden_dim, batch_first=True, bidirectional=True)
        self.output_dim = 2 * hidden_dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x (batch, time, input_dim), mask (batch, time) bool, real steps first in each row →
        (batch, time, 2 * hidden_dim), exactly zero at padded steps (also for a row with no real step)."""
        lengths = mask.long().sum(dim=1).clamp(min=1).cpu()
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        return out * mask.unsqueeze(-1).to(out.dtype)
