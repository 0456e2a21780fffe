"""A head's own character CNN over bilm-tf character ids (the biLM's char CNN is separate and frozen)."""
from __future__ import annotations

from typing import Literal, Sequence

import torch
from torch import nn

N_CHAR_IDS = 262  # bilm-tf character ids 0..261, 0 = padding


class CharCnn(nn.Module):
    """Character embedding → one convolution per width → max over the character slots → ReLU.

    ``padding`` says how many zero slots each convolution adds on both sides: ``"same"`` = width // 2 (the NER
    and SQuAD heads), ``"full"`` = width - 1 (the coref head: every window overlapping at least one slot).
    ReLU after the max equals max over ReLU outputs (ReLU is monotone), values and gradients alike, so one
    order serves heads written either way; the cheaper one is used.
    """

    def __init__(self, char_dim: int, filters: int, widths: int | Sequence[int],
                 padding: Literal["same", "full"] = "same", num_chars: int = N_CHAR_IDS) -> None:
        super().__init__()
        widths = [widths] if isinstance(widths, int) else [int(w) for w in widths]
        if padding not in ("same", "full"):
            raise ValueError(f"CharCnn: padding must be 'same' or 'full', got {padding!r}")
        self.embedding = nn.Embedding(num_chars, char_dim, padding_idx=0)
        self.convs = nn.ModuleList(
            nn.Conv1d(char_dim, filters, kernel_size=w, padding=w // 2 if padding == "same" else w - 1)
            for w in widths)
        self.output_dim = filters * len(widths)

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        """chars (batch, time, chars_per_token) long → (batch, time, filters * len(widths))."""
        batch, time, n_chars = chars.shape
        x = self.embedding(chars.reshape(batch * time, n_chars)).transpose(1, 2)  # (batch*time, char_dim, n_chars)
        pooled = torch.cat([conv(x).max(dim=2).values for conv in self.convs], dim=1)  # (batch*time, output_dim)
        return torch.relu(pooled).view(batch, time, -1)
