"""Token embedders: ``glove``, ``elmo`` and ``glove_elmo``, with ELMo placed at a head's input, output or both.

The biLM itself is not here: its layers arrive precomputed in the batch (from the activation cache), and this
module only owns what a task learns: the GloVe table (frozen or fine-tuned) and one :class:`Elmo` whose mixes are
the placements ("input", "output"), shared by all text fields of a task (premise and hypothesis use the same mix).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import torch
from torch import nn

from elmo_bench.data.batch import Batch
from elmo_bench.data.glove import load_glove, lookup
from elmo_bench.modules.elmo import Elmo
from elmo_bench.records.elmo_settings import ElmoSettings

PAD, UNK = 0, 1


class WordVocabulary:
    """Word → row of the GloVe table; words without a vector share the UNK row (see elmo_bench.data.glove)."""

    def __init__(self, words: list[str]) -> None:
        self.words = ["@@PADDING@@", "@@UNKNOWN@@", *words]
        self.index = {w: i for i, w in enumerate(self.words)}

    def ids(self, tokens: list[str]) -> list[int]:
        get = self.index.get
        return [get(t, get(t.lower(), UNK)) for t in tokens]

    def __len__(self) -> int:
        return len(self.words)


def build_glove(all_words: set[str], source: str, path: str | None, seed: int) -> tuple[WordVocabulary, torch.Tensor]:
    vectors, dim = load_glove(all_words, source=source, path=path)
    known = sorted(w for w in all_words if lookup(vectors, w) is not None)
    vocab = WordVocabulary(known)
    matrix = np.zeros((len(vocab), dim), dtype=np.float32)
    matrix[UNK] = np.random.default_rng(seed).normal(0, 0.01, dim)
    for word in known:
        matrix[vocab.index[word]] = lookup(vectors, word)
    return vocab, torch.from_numpy(matrix)


class TaskEmbedder(nn.Module):
    """Fills a :class:`Batch` with ``words`` (GloVe vectors, frozen or fine-tuned) and the task's ELMo mixes.

    The ELMo part is one :class:`elmo_bench.modules.elmo.Elmo` (without a biLM: layers come from the cache) whose mixes are
    named after their placement; it applies the ELMo dropout, once. GloVe columns are left to the head's own
    input dropout (``Batch.inputs``).
    """

    def __init__(self, glove: torch.Tensor | None, glove_trainable: bool, elmo: ElmoSettings | None,
                 num_layers: int = 0, elmo_dim: int = 0) -> None:
        """``elmo``: the run's ELMo settings, whole (None: no ELMo, a GloVe-only baseline); ``num_layers`` and
        ``elmo_dim``: the biLM's layer count and width, which the settings do not know (they come with its layers)."""
        super().__init__()
        self.glove = None
        if glove is not None:
            self.glove = nn.Embedding.from_pretrained(glove, freeze=not glove_trainable, padding_idx=PAD)
            if not glove_trainable:  # the UNK row stays trainable under the OOV policy
                self.unk = nn.Parameter(glove[UNK].clone())
        self.settings = elmo
        where = [w for w in ("input", "output") if elmo.placement in (w, "both")] if elmo is not None else []
        self.elmo = Elmo(None, mode=elmo.mode, layer_norm=elmo.layer_norm, l2_coef=elmo.l2_coef,
                         dropout=elmo.dropout, num_layers=num_layers, layer_index=elmo.layer_index,
                         gamma_init=elmo.gamma_init, names=where) if elmo is not None and where else None
        self.glove_dim = 0 if glove is None else glove.shape[1]
        self.elmo_dim = elmo_dim
        # follows the module's device (a zero penalty on the CPU would not add to a loss on a GPU in every op)
        self.register_buffer("_zero", torch.zeros(()), persistent=False)

    @property
    def placements(self) -> list[str]:
        return self.elmo.names if self.elmo is not None else []

    @property
    def input_dim(self) -> int:
        return self.glove_dim + (self.elmo_dim if "input" in self.placements else 0)

    @property
    def output_dim(self) -> int:
        return self.elmo_dim if "output" in self.placements else 0

    def _words(self, words: torch.Tensor) -> torch.Tensor:
        vectors = self.glove(words)
        if hasattr(self, "unk"):
            vectors = torch.where((words == UNK).unsqueeze(-1), self.unk.expand_as(vectors), vectors)
        return vectors

    def forward(self, batch: Batch) -> Batch:
        fields = {}
        for name, f in batch.fields.items():
            words = self._words(f.word_ids) if self.glove is not None else None
            if self.elmo is not None and f.layers is None:
                raise ValueError(f"TaskEmbedder uses ELMo but the batch has no biLM layers for field {name!r}")
            mixed = self.elmo.mixed(f.layers, f.mask) if self.elmo is not None else {}
            fields[name] = replace(f, words=words, elmo_in=mixed.get("input"), elmo_out=mixed.get("output"))
        return Batch(fields, batch.targets)

    def penalty(self) -> torch.Tensor:
        return self.elmo.penalty() if self.elmo is not None else self._zero

    def mix_summary(self) -> dict[str, Any]:
        """Learned softmax layer weights and gamma of every mix, for results.json and Figure 2."""
        return self.elmo.summary() if self.elmo is not None else {}
