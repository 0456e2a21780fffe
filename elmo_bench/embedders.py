"""Token embedders: ``glove``, ``elmo`` and ``glove_elmo``, with ELMo placed at a head's input, output or both.

The biLM itself is not here: its layers arrive precomputed in the batch (from the activation cache), and this
module only owns what a task learns: the GloVe table (frozen or fine-tuned) and one :class:`ScalarMix` per
placement ("input", "output"), shared by all text fields of a task (premise and hypothesis use the same mix).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import torch
from torch import nn

from elmo_bench.mix import ScalarMix

PAD, UNK = 0, 1
PLACEMENTS = ("input", "output", "both")


class WordVocabulary:
    """Word → row of the GloVe table; words without a vector share the UNK row (see elmo_bench.glove)."""

    def __init__(self, words: list[str]) -> None:
        self.words = ["@@PADDING@@", "@@UNKNOWN@@", *words]
        self.index = {w: i for i, w in enumerate(self.words)}

    def ids(self, tokens: list[str]) -> list[int]:
        get = self.index.get
        return [get(t, get(t.lower(), UNK)) for t in tokens]

    def __len__(self) -> int:
        return len(self.words)


def build_glove(all_words: set[str], source: str, path: str | None, seed: int) -> tuple[WordVocabulary, torch.Tensor]:
    from elmo_bench.glove import load_glove, lookup

    vectors, dim = load_glove(all_words, source=source, path=path)
    known = sorted(w for w in all_words if lookup(vectors, w) is not None)
    vocab = WordVocabulary(known)
    matrix = np.zeros((len(vocab), dim), dtype=np.float32)
    matrix[UNK] = np.random.default_rng(seed).normal(0, 0.01, dim)
    for word in known:
        matrix[vocab.index[word]] = lookup(vectors, word)
    return vocab, torch.from_numpy(matrix)


class TaskEmbedder(nn.Module):
    """Produces ``embedded[f]`` (batch, time, input_dim) and ``elmo_out[f]`` (batch, time, elmo_dim) | None."""

    def __init__(self, glove: torch.Tensor | None, glove_trainable: bool, use_elmo: bool, num_layers: int,
                 elmo_dim: int, placement: str, mode: str, layer_norm: bool, l2_coef: float, dropout: float,
                 layer_index: int | None = None) -> None:
        super().__init__()
        if placement not in PLACEMENTS:
            raise ValueError(f"ELMo placement expected one of {PLACEMENTS}, found {placement!r}")
        self.glove = None
        if glove is not None:
            self.glove = nn.Embedding.from_pretrained(glove, freeze=not glove_trainable, padding_idx=PAD)
            if not glove_trainable:  # the UNK row stays trainable under the OOV policy
                self.unk = nn.Parameter(glove[UNK].clone())
        self.use_elmo = use_elmo
        self.placement = placement
        self.mixes = nn.ModuleDict()
        if use_elmo:
            for where in ("input", "output"):
                if placement in (where, "both"):
                    self.mixes[where] = ScalarMix(num_layers, mode=mode, layer_norm=layer_norm, l2_coef=l2_coef,
                                                   layer_index=layer_index)
        self.dropout = nn.Dropout(dropout)
        self.glove_dim = 0 if glove is None else glove.shape[1]
        self.elmo_dim = elmo_dim

    @property
    def input_dim(self) -> int:
        return self.glove_dim + (self.elmo_dim if "input" in self.mixes else 0)

    @property
    def output_dim(self) -> int:
        return self.elmo_dim if "output" in self.mixes else 0

    def _words(self, words: torch.Tensor) -> torch.Tensor:
        vectors = self.glove(words)
        if hasattr(self, "unk"):
            vectors = torch.where((words == UNK).unsqueeze(-1), self.unk.expand_as(vectors), vectors)
        return vectors

    def forward(self, fields: Mapping[str, Mapping[str, torch.Tensor]]) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor | None]]:
        embedded, elmo_out = {}, {}
        for name, field in fields.items():
            parts = []
            if self.glove is not None:
                parts.append(self._words(field["words"]))
            if "input" in self.mixes:
                parts.append(self.dropout(self.mixes["input"](field["layers"], field["mask"])))
            embedded[name] = torch.cat(parts, dim=-1)
            elmo_out[name] = self.dropout(self.mixes["output"](field["layers"], field["mask"])) if "output" in self.mixes else None
        return embedded, elmo_out

    def penalty(self) -> torch.Tensor:
        return sum((m.penalty() for m in self.mixes.values()), torch.zeros(()))

    def mix_summary(self) -> dict[str, Any]:
        """Learned softmax layer weights and gamma of every mix, for results.json and Figure 2."""
        return {where: {"weights": [round(float(w), 6) for w in m.weights().detach()], "gamma": m.gamma.item(),
                        "mode": m.mode, "layer_norm": m.layer_norm, "lambda": m.l2_coef}
                for where, m in self.mixes.items()}
