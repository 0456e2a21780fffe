"""Batches: examples grouped by length (less padding), tensors for every text field, cached biLM layers attached."""
from __future__ import annotations

import random
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.data.batch import Batch, FieldBatch
from elmo_bench.modules.token_embedders import WordVocabulary
from elmo_bench.tasks.api import INDEX_KEY, Example, Task


def length_batches(examples: Sequence[Example], fields: Sequence[str], batch_size: int, shuffle: bool,
                   seed: int) -> list[list[int]]:
    """Indices into ``examples`` grouped into batches of similar length (the summed length of all text fields, so a
    SQuAD batch groups contexts, not questions); batch order shuffled with ``seed``."""
    rng = random.Random(seed)
    keys = [sum(len(e[f]) for f in fields) + (rng.random() if shuffle else 0.0) for e in examples]
    order = sorted(range(len(examples)), key=keys.__getitem__)
    batches = [order[i: i + batch_size] for i in range(0, len(order), batch_size)]
    if shuffle:
        rng.shuffle(batches)
    return batches


class Collator:
    """Turns a list of examples into the :class:`Batch` that TaskEmbedder fills and the task head reads.

    ``layer_sources[field]`` gives (L+1, n, dim) arrays by the example's ``INDEX_KEY`` (its row in its split);
    None when the embedder uses no ELMo.
    """

    def __init__(self, task: Task, vocab: WordVocabulary | None, layer_sources: Mapping[str, Any] | None) -> None:
        self.task, self.vocab, self.layer_sources = task, vocab, layer_sources

    def __call__(self, examples: Sequence[Example]) -> Batch:
        fields = {}
        for name in self.task.text_fields:
            tokens = [e[name] for e in examples]
            longest = max(1, max(len(t) for t in tokens))
            mask = torch.zeros(len(examples), longest, dtype=torch.bool)
            for row, t in enumerate(tokens):
                mask[row, : len(t)] = True
            field = FieldBatch(mask=mask, chars=_pad_chars(batch_to_ids(tokens), longest))
            if self.vocab is not None:
                words = torch.zeros(len(examples), longest, dtype=torch.long)
                for row, t in enumerate(tokens):
                    words[row, : len(t)] = torch.tensor(self.vocab.ids(t), dtype=torch.long)
                field.word_ids = words
            if self.layer_sources is not None:
                source = self.layer_sources[name]
                arrays = [source.get(e[INDEX_KEY]) for e in examples]
                layers = np.zeros((len(examples), arrays[0].shape[0], longest, arrays[0].shape[2]), dtype=np.float32)
                for row, array in enumerate(arrays):
                    layers[row, :, : array.shape[1]] = array
                field.layers = torch.from_numpy(layers)
            fields[name] = field
        # targets also at prediction time: some heads read inputs from them (SRL's predicate indicator)
        return Batch(fields, self.task.targets(examples))


def _pad_chars(chars: torch.Tensor, longest: int) -> torch.Tensor:
    if chars.shape[1] == longest:
        return chars
    out = chars.new_zeros(chars.shape[0], longest, chars.shape[2])
    out[:, : chars.shape[1]] = chars
    return out
