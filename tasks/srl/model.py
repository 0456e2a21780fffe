"""He et al. (2017) deep SRL head: predicate indicator + word input → alternating highway LSTMs → tag logits.

Layer k runs left-to-right when k is even and right-to-left when k is odd (the paper's interleaved directions).
Each layer is an LSTM whose output is gated with a highway connection to the layer input:
``h_t = r_t * o_t * tanh(c_t) + (1 - r_t) * W_h x_t`` with ``r_t = sigmoid(W_r [h_{t-1}; x_t])``. Recurrent
(variational) dropout drops the same units of ``h_{t-1}`` at every step of a sequence.
"""
from __future__ import annotations

import torch
from torch import nn

from elmo_bench.data.batch import Batch


class HighwayLSTMLayer(nn.Module):
    """One unidirectional highway LSTM layer over (batch, time, in_dim) → (batch, time, hidden)."""

    def __init__(self, in_dim: int, hidden: int, recurrent_dropout: float) -> None:
        super().__init__()
        self.hidden = hidden
        self.recurrent_dropout = recurrent_dropout
        # input part of gates i, f, o, g, r and the highway projection W_h x
        self.input_linear = nn.Linear(in_dim, 6 * hidden, bias=True)
        self.state_linear = nn.Linear(hidden, 5 * hidden, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        h = self.hidden
        for k in range(5):
            nn.init.orthogonal_(self.state_linear.weight.data[k * h:(k + 1) * h])
        nn.init.xavier_uniform_(self.input_linear.weight)
        nn.init.zeros_(self.input_linear.bias)
        self.input_linear.bias.data[h:2 * h].fill_(1.0)  # forget gate bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (batch, time, in_dim), padding at the end of each row → (batch, time, hidden)."""
        batch, t_len, _ = x.shape
        h = self.hidden
        proj = self.input_linear(x)  # (batch, time, 6h)
        state = x.new_zeros(batch, h)
        cell = x.new_zeros(batch, h)
        drop = None
        if self.training and self.recurrent_dropout > 0:
            keep = 1.0 - self.recurrent_dropout
            drop = torch.bernoulli(x.new_full((batch, h), keep)) / keep
        outs = []
        for t in range(t_len):
            prev = state * drop if drop is not None else state
            gates = proj[:, t, :5 * h] + self.state_linear(prev)
            i, f, o, g, r = gates.split(h, dim=-1)
            cell = torch.sigmoid(f) * cell + torch.sigmoid(i) * torch.tanh(g)
            lstm_out = torch.sigmoid(o) * torch.tanh(cell)
            gate = torch.sigmoid(r)
            state = gate * lstm_out + (1 - gate) * proj[:, t, 5 * h:]
            outs.append(state)
        return torch.stack(outs, dim=1)


def reverse_padded(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row's first ``lengths[b]`` steps, leaving padding in place; x (batch, time, dim)."""
    t_len = x.shape[1]
    pos = torch.arange(t_len, device=x.device).unsqueeze(0)  # (1, time)
    idx = torch.where(pos < lengths.unsqueeze(1), lengths.unsqueeze(1) - 1 - pos, pos)  # (batch, time)
    return x.gather(1, idx.unsqueeze(-1).expand_as(x))


class SrlHead(nn.Module):
    """forward(batch) → {"logits" (batch, time, labels), "mask", "loss"?}."""

    def __init__(self, input_dim: int, n_labels: int, *, hidden: int, layers: int, predicate_dim: int,
                 recurrent_dropout: float, elmo_output_dim: int = 0, field: str = "tokens") -> None:
        super().__init__()
        self.field = field
        self.predicate_embedding = nn.Embedding(2, predicate_dim)
        dims = [input_dim + predicate_dim] + [hidden] * layers
        self.layers = nn.ModuleList(HighwayLSTMLayer(dims[k], hidden, recurrent_dropout) for k in range(layers))
        self.elmo_output_dim = elmo_output_dim
        self.output = nn.Linear(hidden + elmo_output_dim, n_labels)

    def forward(self, batch: Batch) -> dict[str, torch.Tensor]:
        """batch.fields[f] words / elmo_in (batch, time, ·), elmo_out (batch, time, elmo_dim); targets
        predicate_indicator (batch, time) (an input), tags (batch, time) → {"logits", "mask", "loss"?}."""
        x = batch.inputs(self.field)  # (batch, time, input_dim); no input dropout in this head (He et al.)
        m = batch.mask(self.field)  # (batch, time)
        targets = batch.targets
        lengths = m.long().sum(1)
        indicator = targets.get("predicate_indicator")
        if indicator is None:
            raise KeyError("SrlHead needs targets['predicate_indicator'] (batch, time): the predicate position "
                           "is an input; Task.targets provides it also at prediction time")
        h = torch.cat([x, self.predicate_embedding(indicator.long() * m.long())], dim=-1)
        for k, layer in enumerate(self.layers):
            if k % 2 == 1:
                h = reverse_padded(layer(reverse_padded(h, lengths)), lengths)
            else:
                h = layer(h)
        h = h * m.unsqueeze(-1)
        out = batch.elmo_output(self.field, self.elmo_output_dim, "SrlHead")
        if out is not None:
            h = torch.cat([h, out], dim=-1)
        logits = self.output(h)  # (batch, time, n_labels)
        result = {"logits": logits, "mask": m}
        if "tags" in targets:
            nll = nn.functional.cross_entropy(logits.transpose(1, 2), targets["tags"], reduction="none")
            result["loss"] = (nll * m).sum() / x.shape[0]
        return result
