"""The biLM as a language model for training: the core :class:`BiLM` plus one softmax shared by both directions.

The core's ``BiLstmStack`` reverses every sentence within its length; for training on fixed windows we call its
``ProjectedLstmLayer``s' window path directly instead (time-major, hand-written backward), feeding the forward
stream as direction 0 and the (already reversed) backward stream as direction 1, every row full length, with the
state carried in from the previous window.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

from elmo_bench.bilm.lstm import LayerState
from elmo_bench.bilm.model import BiLM
from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.pretrain.pretrain_config import PretrainConfig, PretrainModel
from elmo_bench.pretrain.softmax import LMSoftmax


def training_extra(cfg: PretrainConfig, vocab_size: int) -> dict[str, Any]:
    """bilm-tf's training keys, recorded in options.json (the stored form: these keys and values, unchanged)."""
    return {"n_tokens_vocab": vocab_size, "unroll_steps": cfg.unroll_steps, "batch_size": cfg.batch_size,
            "n_negative_samples_batch": cfg.num_sampled, "dropout": cfg.dropout, "all_clip_norm_val": cfg.grad_clip}


def make_options(model: PretrainModel, extra: dict[str, Any] | None = None) -> BiLMOptions:
    """BiLMOptions from the ``model`` part of a pretrain config; ``extra`` = bilm-tf training keys to record."""
    raw = dict(extra or {})
    raw.update({
        "bidirectional": True,
        "char_cnn": {
            "activation": model.activation,
            "embedding": {"dim": model.char_dim},
            "filters": [[int(w), int(n)] for w, n in model.filters],
            "max_characters_per_token": 50,
            "n_characters": 262,
            "n_highway": model.n_highway,
        },
        "lstm": {
            "cell_clip": model.cell_clip,
            "dim": model.lstm_dim,
            "n_layers": model.n_layers,
            "proj_clip": model.proj_clip,
            "projection_dim": model.projection_dim,
            "use_skip_connections": model.use_skip_connections,
        },
    })
    return BiLMOptions.from_dict(raw, source="pretrain config")


class LanguageModel(nn.Module):
    def __init__(self, options: BiLMOptions, vocab_size: int, num_sampled: int | None, dropout: float = 0.0,
                 seed: int = 0) -> None:
        super().__init__()
        self.bilm = BiLM(options)
        self.softmax = LMSoftmax(vocab_size, options.projection_dim, num_sampled, seed)
        self.dropout = nn.Dropout(dropout)

    def zero_state(self, batch: int) -> list[LayerState]:
        like = self.softmax.weight
        return self.bilm.lstm.zero_state(batch, like)

    def forward(self, chars: torch.Tensor, inverse: torch.Tensor, targets: torch.Tensor,
                state: list[LayerState]) -> tuple[torch.Tensor, list[LayerState]]:
        """chars (types, 50): character ids of the distinct word types of this window; inverse (2, batch, time):
        index into ``chars`` of every input token (axis 0 = forward, backward stream); targets (2, batch, time)
        softmax ids. Returns the mean loss over both directions and the final state per layer."""
        vectors = self.bilm.token_encoder.encode_words(chars)  # (types, proj)
        x = vectors[inverse.transpose(1, 2)]  # (2, time, batch, proj): time-major for the window LSTM
        skip = self.bilm.options.use_skip_connections
        final = []
        for k, layer in enumerate(self.bilm.lstm.layers):
            out, layer_state = layer.forward_window(self.dropout(x), state[k])
            if k > 0 and skip:
                out = out + x
            x = out
            final.append(layer_state)
        h = self.dropout(x).reshape(-1, x.shape[-1])
        return self.softmax.loss(h, targets.transpose(1, 2).reshape(-1)), final
