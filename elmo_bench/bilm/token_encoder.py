"""The context-free token layer of the biLM: character CNN → highway layers → linear projection.

Semantics follow bilm-tf exactly: one valid (unpadded) convolution per ``(width, count)`` filter bank, max over
character positions, then the activation; highway layer ``k`` computes
``carry = sigmoid(x W_carry + b_carry)``, ``x = carry * relu(x W_transform + b_transform) + (1 - carry) * x``;
finally ``x W_proj + b_proj``.

Because the layer has no context, a frozen encoder caches its output per word type (keyed by the token's
character ids): each distinct word is run through the CNN once per process, like AllenNLP's ``vocab_to_cache``.
"""
from __future__ import annotations

import torch
from torch import nn

from elmo_bench.bilm.chars import PADDING_CHAR
from elmo_bench.bilm.options import BiLMOptions

PADDING_ID = PADDING_CHAR + 1  # the shifted id that fills a token's unused character positions


class Highway(nn.Module):
    """One bilm-tf highway layer on (..., dim) inputs."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.carry = nn.Linear(dim, dim)
        self.transform = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        carry = torch.sigmoid(self.carry(x))
        return carry * torch.relu(self.transform(x)) + (1.0 - carry) * x


class CharTokenEncoder(nn.Module):
    """Maps character ids (batch, time, max_chars) to token vectors (batch, time, projection_dim)."""

    def __init__(self, options: BiLMOptions, chunk_size: int = 4096, max_cached_types: int = 500_000) -> None:
        super().__init__()
        self.options = options
        # Row 0 is the padding character: kept at zero and never trained.
        self.char_embedding = nn.Embedding(options.n_characters, options.char_dim, padding_idx=0)
        self.convolutions = nn.ModuleList(
            nn.Conv1d(options.char_dim, count, width) for width, count in options.filters
        )
        self.highways = nn.ModuleList(Highway(options.n_filters) for _ in range(options.n_highway))
        self.projection = nn.Linear(options.n_filters, options.projection_dim)
        self.activation = torch.relu if options.activation == "relu" else torch.tanh
        self.chunk_size = chunk_size
        self.max_cached_types = max_cached_types
        self._type_cache: dict[bytes, torch.Tensor] = {}

    def clear_cache(self) -> None:
        """Forget cached word vectors: call after the weights change (loading does it)."""
        self._type_cache.clear()

    def train(self, mode: bool = True) -> "CharTokenEncoder":
        if mode:
            self.clear_cache()
        return super().train(mode)

    def encode_words(self, chars: torch.Tensor) -> torch.Tensor:
        """(words, max_chars) character ids → (words, projection_dim), computed in bounded chunks."""
        if chars.shape[0] > self.chunk_size:
            return torch.cat([self.encode_words(part) for part in chars.split(self.chunk_size)])
        x = self.activation(self._pooled_filters(chars))  # (words, n_filters)
        for highway in self.highways:
            x = highway(x)
        return self.projection(x)

    def _pooled_filters(self, chars: torch.Tensor, buckets: int = 4) -> torch.Tensor:
        """(words, max_chars) → (words, n_filters): every filter bank's max over positions, before the activation.

        Exact shortcut: a window lying wholly in the padding gives the same value for every word, so a word of
        ``n`` real characters (BOW and EOW included) needs only its first ``n + max_width`` positions (every window
        that touches a real character plus one all-padding window). Words are sorted by that length and run in a
        few buckets, each cut to its own longest; a typical batch computes a fifth of the full 50 positions.
        """
        full = chars.shape[1]
        widths = max(width for width, _ in self.options.filters)
        needed = ((chars != PADDING_ID).sum(dim=1) + widths).clamp(max=full)
        order = torch.argsort(needed)
        parts = []
        for index in order.tensor_split(min(buckets, len(order))):
            if len(index) == 0:
                continue
            length = int(needed[index[-1]])
            embedded = self.char_embedding(chars[index, :length])  # (words, length, char_dim)
            parts.append(torch.cat([self._conv_max(embedded, conv) for conv in self.convolutions], dim=-1))
        pooled = torch.cat(parts)
        return pooled[torch.argsort(order)]

    @staticmethod
    def _conv_max(embedded: torch.Tensor, conv: nn.Conv1d) -> torch.Tensor:
        """(words, length, char_dim) → (words, filters): ``conv`` as one GEMM over unfolded windows, max over
        positions (2-3x faster than ``Conv1d`` on these small, short inputs on a CPU, forward and backward)."""
        count, char_dim, width = conv.weight.shape
        windows = embedded.unfold(1, width, 1)  # (words, positions, char_dim, width): [w, s, c, k] = x[w, s + k, c]
        flat = windows.reshape(*windows.shape[:2], char_dim * width)
        return torch.matmul(flat, conv.weight.reshape(count, char_dim * width).t()).max(dim=1).values + conv.bias

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        """(batch, time, max_chars) → (batch, time, projection_dim); padded tokens (all-zero rows) give zeros."""
        batch, time, max_chars = chars.shape
        flat = chars.reshape(-1, max_chars)
        present = flat[:, 0] > 0
        out = flat.new_zeros((flat.shape[0], self.options.projection_dim), dtype=self.projection.weight.dtype)
        if not bool(present.any()):
            return out.view(batch, time, -1)
        words = flat[present]
        if self.training or torch.is_grad_enabled():
            # each distinct word once (a 64 x 20 batch of novel text has ~1,300 tokens but ~550 types); the
            # gradients of a word's repeats add up through the index, as they would over separate rows
            types, inverse = torch.unique(words, dim=0, return_inverse=True)
            out[present] = self.encode_words(types)[inverse]
        else:
            out[present] = self._encode_cached(words)
        return out.view(batch, time, -1)

    def _encode_cached(self, words: torch.Tensor) -> torch.Tensor:
        """Encode only word types not seen before; (words, max_chars) → (words, projection_dim)."""
        types, inverse = torch.unique(words, dim=0, return_inverse=True)
        keys = [row.tobytes() for row in types.to(torch.int16).cpu().numpy()]
        missing = [i for i, key in enumerate(keys) if key not in self._type_cache]
        fresh = dict(zip(missing, self.encode_words(types[missing]))) if missing else {}
        vectors = torch.stack([fresh[i] if i in fresh else self._type_cache[key] for i, key in enumerate(keys)])
        if len(self._type_cache) + len(fresh) > self.max_cached_types:
            self._type_cache.clear()
        for i, vector in fresh.items():
            self._type_cache[keys[i]] = vector
        return vectors[inverse]
