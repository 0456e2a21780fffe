"""The biLM: character ids in, L+1 layer representations out.

Layer 0 is the context-free token layer repeated for both directions ``[x ; x]``; layer k (1..L) is
``[forward_k ; backward_k]``. Sentence boundaries ``<S>`` / ``</S>`` are added around every sentence before the
LSTMs, as bilm-tf does, and removed from the output unless asked for.

Stateless by default: every batch starts from a zero LSTM state, so a sentence's activations never depend on its
batch mates or on earlier batches. ``stateful=True`` reproduces bilm-tf / AllenNLP: the final state of row i is
the initial state of row i in the next batch (rows beyond a smaller batch keep their state); ``reset_states()``
starts over.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from elmo_bench.bilm.chars import BOS_IDS, EOS_IDS
from elmo_bench.bilm.lstm import BiLstmStack, LayerState
from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.bilm.token_encoder import CharTokenEncoder


@dataclass
class BiLMOutput:
    layers: torch.Tensor  # (batch, L + 1, time, 2 * projection_dim)
    mask: torch.Tensor  # (batch, time) bool


def add_sentence_boundaries(chars: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(batch, time, max_chars) → (batch, time + 2, max_chars) with <S> first and </S> after the last real token,
    and the new lengths (batch,)."""
    batch, time, max_chars = chars.shape
    lengths = (chars[:, :, 0] > 0).sum(dim=1)
    out = chars.new_zeros(batch, time + 2, max_chars)
    out[:, 1: time + 1] = chars
    out[:, 0] = torch.tensor(BOS_IDS[:max_chars], dtype=chars.dtype, device=chars.device)
    out[torch.arange(batch, device=chars.device), lengths + 1] = torch.tensor(EOS_IDS[:max_chars], dtype=chars.dtype,
                                                                              device=chars.device)
    return out, lengths + 2


class BiLM(nn.Module):
    def __init__(self, options: BiLMOptions, stateful: bool = False, dropout: float = 0.0) -> None:
        super().__init__()
        self.options = options
        self.stateful = stateful
        self.token_encoder = CharTokenEncoder(options)
        self.lstm = BiLstmStack(options, dropout=dropout)
        self._states: list[LayerState] | None = None

    @property
    def num_layers(self) -> int:
        """Number of representation layers, L + 1."""
        return self.options.n_layers + 1

    @property
    def output_dim(self) -> int:
        return self.options.output_dim

    def reset_states(self) -> None:
        """Forget the carried LSTM state (stateful mode)."""
        self._states = None

    def forward(self, chars: torch.Tensor, keep_boundaries: bool = False) -> BiLMOutput:
        """chars (batch, time, max_chars) from ``batch_to_ids`` (no boundaries).

        Returns layers (batch, L+1, time, 2*proj) and mask (batch, time); with ``keep_boundaries`` time grows by 2.
        Rows with no tokens are allowed and give all-zero output.
        """
        with_bounds, lengths = add_sentence_boundaries(chars)
        tokens = self.token_encoder(with_bounds)  # (batch, time + 2, proj)
        initial = self._initial_state(tokens) if self.stateful else None
        outputs, final = self.lstm(tokens, lengths, initial)
        if self.stateful:
            self._store_state(final)
        if self.lstm.eraser is not None and self.lstm.eraser.layer == 0:  # the token layer as the LSTMs saw it
            tokens = self.lstm.eraser.directions(tokens.unsqueeze(0), lengths)[0]
        layers = torch.stack([torch.cat([tokens, tokens], dim=-1), *outputs], dim=1)
        time = with_bounds.shape[1]
        mask = torch.arange(time, device=chars.device).unsqueeze(0) < lengths.unsqueeze(1)
        if keep_boundaries:
            return BiLMOutput(layers * mask[:, None, :, None], mask)
        inner = torch.arange(time - 2, device=chars.device).unsqueeze(0) < (lengths - 2).unsqueeze(1)
        return BiLMOutput(layers[:, :, 1:-1] * inner[:, None, :, None], inner)

    def _initial_state(self, like: torch.Tensor) -> list[LayerState]:
        batch = like.shape[0]
        zero = self.lstm.zero_state(batch, like)
        if self._states is None:
            return zero
        initial = []
        for (h0, c0), (h, c) in zip(zero, self._states):
            rows = min(batch, h.shape[1])
            h0, c0 = h0.clone(), c0.clone()
            h0[:, :rows], c0[:, :rows] = h[:, :rows], c[:, :rows]
            initial.append((h0, c0))
        return initial

    def _store_state(self, final: list[LayerState]) -> None:
        final = [(h.detach(), c.detach()) for h, c in final]
        if self._states is None:
            self._states = final
            return
        merged = []
        for (h_new, c_new), (h_old, c_old) in zip(final, self._states):
            rows = h_new.shape[1]
            if h_old.shape[1] > rows:
                h_new = torch.cat([h_new, h_old[:, rows:]], dim=1)
                c_new = torch.cat([c_new, c_old[:, rows:]], dim=1)
            merged.append((h_new, c_new))
        self._states = merged
