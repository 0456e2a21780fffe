"""The biLM's LSTM stacks: TensorFlow ``LSTMCell`` semantics with projection and clipping, both directions at once.

Per layer and direction (gates in TF order i, j, f, o; forget bias 1.0 added at run time, as TF does):

    g = [x_t ; h_{t-1}] W + b
    c_t = sigmoid(f + 1) * c_{t-1} + sigmoid(i) * tanh(j)        clipped to ±cell_clip
    h_t = clip((sigmoid(o) * tanh(c_t)) W_P, ±proj_clip)

The forward and the backward stack have separate weights; they run in the same time loop as one batched matmul
(``torch.bmm`` over a leading direction axis of size 2), which halves the per-step Python overhead. The backward
direction sees each sentence reversed within its own length, so padding always sits at the end of every
sequence and never reaches a real token. With ``use_skip_connections`` every layer after the first adds its input
to its output (TF's ResidualWrapper: the recurrence itself uses the un-added output).
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.bilm.window_lstm import window_lstm

#: (h, c) for every layer: h (2, batch, projection_dim), c (2, batch, lstm_dim); axis 0 = forward, backward.
LayerState = tuple[torch.Tensor, torch.Tensor]


def reverse_within_lengths(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row of (batch, time, ...) within its own length; positions past the length stay in place."""
    batch, time = x.shape[:2]
    positions = torch.arange(time, device=x.device).expand(batch, time)
    reversed_index = lengths.unsqueeze(1) - 1 - positions
    index = torch.where(reversed_index >= 0, reversed_index, positions)
    gather_index = index.view(batch, time, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, gather_index)


class ProjectedLstmLayer(nn.Module):
    """One layer of both directions. Parameters carry a leading direction axis of size 2."""

    def __init__(self, input_dim: int, lstm_dim: int, projection_dim: int,
                 cell_clip: float | None, proj_clip: float | None) -> None:
        super().__init__()
        self.lstm_dim, self.projection_dim = lstm_dim, projection_dim
        self.cell_clip, self.proj_clip = cell_clip, proj_clip
        self.input_weight = nn.Parameter(torch.empty(2, input_dim, 4 * lstm_dim))
        self.hidden_weight = nn.Parameter(torch.empty(2, projection_dim, 4 * lstm_dim))
        self.bias = nn.Parameter(torch.zeros(2, 4 * lstm_dim))
        self.projection = nn.Parameter(torch.empty(2, lstm_dim, projection_dim))
        bound = 1.0 / math.sqrt(lstm_dim)
        for weight in (self.input_weight, self.hidden_weight, self.projection):
            nn.init.uniform_(weight, -bound, bound)
        forget_bias = torch.zeros(4 * lstm_dim)
        forget_bias[2 * lstm_dim: 3 * lstm_dim] = 1.0
        self.register_buffer("forget_bias", forget_bias, persistent=False)

    def forward(self, x: torch.Tensor, batch_sizes: list[int], state: LayerState) -> tuple[torch.Tensor, LayerState]:
        """x (2, batch, time, input_dim), rows sorted by length (longest first); ``batch_sizes[t]`` = rows still
        running at step t. Returns outputs (2, batch, time, projection_dim), zero past each length, and the final
        state of every row (taken at its last real step)."""
        directions, batch, time, _ = x.shape
        gates_x = torch.baddbmm(
            (self.bias + self.forget_bias).unsqueeze(1), x.reshape(directions, batch * time, -1), self.input_weight
        ).view(directions, batch, time, -1)
        h, c = state
        outputs = []
        for t in range(time):
            n = batch_sizes[t]
            h_run, c_run = (h, c) if n == batch else (h[:, :n], c[:, :n])
            gates = torch.baddbmm(gates_x[:, :n, t], h_run, self.hidden_weight)
            # one sigmoid over all four gates (j's sigmoid is wasted, but one kernel beats three on small batches)
            i, _, f, o = torch.sigmoid(gates).chunk(4, dim=-1)
            j = torch.tanh(gates[..., self.lstm_dim: 2 * self.lstm_dim])
            c_new = torch.addcmul(f * c_run, i, j)
            if self.cell_clip is not None:
                c_new = c_new.clamp(-self.cell_clip, self.cell_clip)
            h_new = torch.bmm(o * torch.tanh(c_new), self.projection)
            if self.proj_clip is not None:
                h_new = h_new.clamp(-self.proj_clip, self.proj_clip)
            if n == batch:
                h, c = h_new, c_new
                outputs.append(h_new)
            else:
                h, c = torch.cat([h_new, h[:, n:]], dim=1), torch.cat([c_new, c[:, n:]], dim=1)
                outputs.append(torch.cat([h_new, h_new.new_zeros(directions, batch - n, self.projection_dim)], dim=1))
        return torch.stack(outputs, dim=2), (h, c)


    def forward_window(self, x: torch.Tensor, state: LayerState) -> tuple[torch.Tensor, LayerState]:
        """Pretraining windows, time-major: x (2, time, batch, input_dim), every row full length, initial state
        (h (2, batch, P), c (2, batch, H)) → outputs (2, time, batch, P) and the final state. Same math as
        :meth:`forward`, with the hand-written backward of :mod:`elmo_bench.bilm.window_lstm`."""
        h0, c0 = state
        out, h, c = window_lstm(x, self.input_weight, self.hidden_weight, self.bias + self.forget_bias,
                                self.projection, h0, c0, self.cell_clip, self.proj_clip)
        return out, (h, c)


class BiLstmStack(nn.Module):
    """L layers of :class:`ProjectedLstmLayer` with optional residual connections and input dropout (training)."""

    def __init__(self, options: BiLMOptions, dropout: float = 0.0) -> None:
        super().__init__()
        self.options = options
        self.layers = nn.ModuleList(
            ProjectedLstmLayer(options.projection_dim, options.lstm_dim, options.projection_dim,
                               options.cell_clip, options.proj_clip)
            for _ in range(options.n_layers)
        )
        self.dropout = nn.Dropout(dropout)
        #: amnesic probing (elmo_bench.encoders.erasing.InModelEraser): erases layer ``eraser.layer``'s output
        #: after the residual add (0: the token layer, the stack's input); None = the model as trained
        self.eraser: Any = None

    def zero_state(self, batch: int, like: torch.Tensor) -> list[LayerState]:
        p, d = self.options.projection_dim, self.options.lstm_dim
        return [(like.new_zeros(2, batch, p), like.new_zeros(2, batch, d)) for _ in self.layers]

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor, state: list[LayerState] | None = None,
                memo: dict[int, Any] | None = None) -> tuple[list[torch.Tensor], list[LayerState]]:
        """tokens (batch, time, projection_dim), lengths (batch,) >= 1, optional initial state per layer.

        Returns per layer the outputs (batch, time, 2 * projection_dim) as ``[forward ; backward]`` in the
        original token order (zeros past each length) and the final state per layer (rows in input order).
        ``memo`` (a dict per batch, with the same tokens and state): the layers below the eraser's are computed
        once and reused by the next call (amnesic probing recomputes only from the erased layer up).
        """
        batch, time, _ = tokens.shape
        order = torch.argsort(lengths, descending=True, stable=True)
        restore = torch.argsort(order)
        sorted_lengths = lengths[order]
        counts = torch.bincount(sorted_lengths, minlength=time + 1).tolist()
        batch_sizes, running = [], batch
        for t in range(time):
            running -= counts[t]
            batch_sizes.append(running)
        x_sorted = tokens[order]
        x = torch.stack([x_sorted, reverse_within_lengths(x_sorted, sorted_lengths)])  # (2, batch, time, dim)
        if state is None:
            state = self.zero_state(batch, tokens)
        if self.eraser is not None and self.eraser.layer == 0:
            x = self.eraser.directions(x, sorted_lengths)
        outputs, final_states = [], []
        clean = len(self.layers) if self.eraser is None else self.eraser.layer  # layers below: never erased input
        for index, layer in enumerate(self.layers):
            if memo is not None and index < clean and index in memo:
                out, (h, c) = memo[index]
            else:
                h0, c0 = state[index]
                out, (h, c) = layer(self.dropout(x), batch_sizes, (h0[:, order], c0[:, order]))
                if index > 0 and self.options.use_skip_connections:
                    out = out + x
                if memo is not None and index < clean:
                    memo[index] = (out, (h, c))
            if self.eraser is not None and self.eraser.layer == index + 1:
                out = self.eraser.directions(out, sorted_lengths)  # padding stays zero: word positions only
            x = out
            forward = out[0][restore]
            backward = reverse_within_lengths(out[1], sorted_lengths)[restore]
            outputs.append(torch.cat([forward, backward], dim=-1))
            final_states.append((h[:, restore], c[:, restore]))
        return outputs, final_states
