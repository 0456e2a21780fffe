"""A head's own character CNN over bilm-tf character ids (the biLM's char CNN is separate and frozen)."""
from __future__ import annotations

from typing import Literal, Sequence

import torch
from torch import nn

N_CHAR_IDS = 262  # bilm-tf character ids 0..261, 0 = padding


def trim_slots(chars: torch.Tensor, width: int) -> torch.Tensor:
    """chars (..., slots) → (..., kept): the slots up to the last one any token uses, plus ``width`` more.

    Exact for a convolution of width <= ``width`` followed by a max over slots when each token's slots after
    that point hold one repeated id (bilm-tf's padding character, or 0 for an absent token): then the kept tail
    still holds a window wholly inside that padding, and windows crossing into the convolution's own zero
    padding see the same patterns as before. Returns ``chars`` itself when that does not hold.
    """
    n_slots = chars.shape[-1]
    tail_id = chars[..., -1:]
    differs = (chars != tail_id).reshape(-1, n_slots).any(dim=0)  # (slots,): some token is not padding there
    used = int(differs.nonzero().max()) + 1 if bool(differs.any()) else 0
    keep = min(n_slots, used + width)
    return chars if keep == n_slots else chars[..., :keep]


class CharCnn(nn.Module):
    """Character embedding → one convolution per width → max over the character slots → ReLU.

    ``padding`` says how many zero slots each convolution adds on both sides: ``"same"`` = width // 2 (the NER
    and SQuAD heads), ``"full"`` = width - 1 (the coref head: every window overlapping at least one slot).
    ReLU after the max equals max over ReLU outputs (ReLU is monotone), values and gradients alike, so one
    order serves heads written either way; the cheaper one is used.

    The convolutions run only over the character slots the batch's longest word needs plus one window of its
    padding (``trim_slots``): every window that lies wholly in a word's padding slots has the same value, so one
    such window per word stands for all of them and the max (and its gradient) is unchanged. Words are mostly
    under 12 of the 50 bilm-tf slots, so this is 2-4x less convolution. Each distinct word of the batch goes
    through the CNN once (the output is indexed back; the gradients of repeats add up, as they would).
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
        chars = trim_slots(chars, max(conv.kernel_size[0] for conv in self.convs))
        batch, time, n_chars = chars.shape
        # each distinct word once: a SQuAD batch repeats its paragraphs' words 3-5 times, a coref document more
        words, inverse = torch.unique(chars.reshape(batch * time, n_chars), dim=0, return_inverse=True)
        x = self.embedding(words).transpose(1, 2)  # (distinct words, char_dim, n_chars)
        pooled = torch.cat([conv(x).max(dim=2).values for conv in self.convs], dim=1)  # (distinct, output_dim)
        return torch.relu(pooled)[inverse].view(batch, time, -1)
