"""The tokenised corpus in memory and bilm-tf's batching: ``batch`` independent streams of sentences, cut into
fixed windows of ``unroll_steps`` tokens, so that the LSTM state of row i carries over to row i of the next window.

Each sentence enters its row's stream as ``<S> w1 .. wn </S>`` for the forward LM and reversed, ``</S> wn .. w1
<S>``, for the backward LM; a window's targets are the next tokens of the same stream. When a row's stream runs
short it takes the next sentence from one shared, per-epoch shuffled order (row 0 first), so every rank of a
distributed run (each computing the whole global batch, then taking its rows) sees the same streams.

Tokens are stored as *type* ids (every distinct string in the corpus, not just the softmax vocabulary): the char
CNN sees the real spelling of out-of-vocabulary words; ``TypeTable.to_vocab`` maps a type to its softmax id.
"""
from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from elmo_bench.base.errors import DataError
from elmo_bench.bilm.chars import word_to_ids
from elmo_bench.pretrain.corpus import read_sentences
from elmo_bench.pretrain.vocab import BOS, EOS, UNK, Vocab, build_vocab


@dataclass
class TypeTable:
    types: list[str]
    chars: torch.Tensor  # (n_types, 50) int16 character ids
    to_vocab: torch.Tensor  # (n_types,) long softmax ids

    @classmethod
    def build(cls, types: list[str], vocab: Vocab, max_chars: int = 50) -> "TypeTable":
        chars = torch.tensor([word_to_ids(t, max_chars) for t in types], dtype=torch.int16)
        return cls(types, chars, torch.tensor([vocab.id(t) for t in types], dtype=torch.long))


@dataclass
class Corpus:
    """All sentences as one flat array of type ids with sentence offsets (``<S>``/``</S>`` not stored)."""
    ids: np.ndarray  # (tokens,) int32
    offsets: np.ndarray  # (sentences + 1,) int64
    table: TypeTable
    vocab: Vocab
    bos_type: int
    eos_type: int

    @property
    def n_sentences(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_tokens(self) -> int:
        """Stream tokens, boundaries included (what a training step counts)."""
        return int(len(self.ids) + 2 * self.n_sentences)

    def sentence(self, i: int) -> np.ndarray:
        """Type ids of ``<S> w1 .. wn </S>``."""
        body = self.ids[self.offsets[i]: self.offsets[i + 1]]
        return np.concatenate([[self.bos_type], body, [self.eos_type]]).astype(np.int64)


def load_corpus(paths: str | Sequence[str], vocab: Vocab | str | Path | None = None, min_count: int = 1,
                max_vocab: int | None = None) -> Corpus:
    """Read training files; build the vocabulary from their counts unless ``vocab`` (a Vocab or a file) is given."""
    type_index: dict[str, int] = {BOS: 0, EOS: 1}
    ids = array("i")
    offsets = array("q", [0])
    for sentence in read_sentences(paths):
        for token in sentence:
            t = type_index.get(token)
            if t is None:
                t = type_index[token] = len(type_index)
            ids.append(t)
        offsets.append(len(ids))
    ids_np = np.frombuffer(ids, dtype=np.int32).copy()
    offsets_np = np.frombuffer(offsets, dtype=np.int64).copy()
    types = list(type_index)
    type_counts = np.bincount(ids_np, minlength=len(types))
    counts = Counter({t: int(c) for t, c in zip(types, type_counts) if c})
    n_sentences = len(offsets_np) - 1
    if isinstance(vocab, (str, Path)):
        vocab = Vocab.load(vocab)
    if vocab is None:
        vocab = build_vocab(counts, n_sentences, min_count, max_vocab)
    elif vocab.counts is None:  # a given vocab file: count its words in this corpus for the unigram reference
        known = {t: counts.get(t, 0) for t in vocab.tokens if t not in (BOS, EOS, UNK)}
        specials = {BOS: n_sentences, EOS: n_sentences, UNK: len(ids_np) - sum(known.values())}
        vocab = Vocab(vocab.tokens, [specials[t] if t in specials else known[t] for t in vocab.tokens])
    return Corpus(ids_np, offsets_np, TypeTable.build(types, vocab), vocab, 0, 1)


class StreamBatcher:
    """Yields windows (type ids) for ``batch`` parallel streams; ``state()``/``set_state()`` make it resumable."""

    def __init__(self, corpus: Corpus, batch: int, unroll: int, seed: int = 0, shuffle: bool = True) -> None:
        if corpus.n_sentences == 0:
            raise DataError("training corpus has no sentences")
        self.corpus, self.batch, self.unroll, self.seed, self.shuffle = corpus, batch, unroll, seed, shuffle
        self.epoch, self.cursor = 0, 0
        self._order = self._make_order(0)
        self.forward = [np.empty(0, dtype=np.int64) for _ in range(batch)]
        self.backward = [np.empty(0, dtype=np.int64) for _ in range(batch)]

    def _make_order(self, epoch: int) -> np.ndarray:
        n = self.corpus.n_sentences
        if not self.shuffle:
            return np.arange(n)
        return np.random.default_rng([self.seed, epoch]).permutation(n)

    def _next_sentence(self) -> np.ndarray:
        if self.cursor >= len(self._order):
            self.epoch += 1
            self.cursor = 0
            self._order = self._make_order(self.epoch)
        s = self.corpus.sentence(int(self._order[self.cursor]))
        self.cursor += 1
        return s

    def next_batch(self) -> tuple[np.ndarray, np.ndarray]:
        """Returns inputs and targets, each (2, batch, unroll) type ids; axis 0 = forward, backward stream."""
        need = self.unroll + 1
        inputs = np.empty((2, self.batch, self.unroll), dtype=np.int64)
        targets = np.empty_like(inputs)
        for row in range(self.batch):
            while len(self.forward[row]) < need:
                s = self._next_sentence()
                self.forward[row] = np.concatenate([self.forward[row], s])
                self.backward[row] = np.concatenate([self.backward[row], s[::-1]])
            for d, buffers in enumerate((self.forward, self.backward)):
                buf = buffers[row]
                inputs[d, row] = buf[: self.unroll]
                targets[d, row] = buf[1: need]
                buffers[row] = buf[self.unroll:]
        return inputs, targets

    def restart_at(self, epoch: int, cursor: int) -> None:
        """Empty streams that continue from sentence ``cursor`` of epoch ``epoch``'s order (a batch-size change)."""
        self.epoch, self.cursor = int(epoch), int(cursor)
        self._order = self._make_order(self.epoch)
        self.forward = [np.empty(0, dtype=np.int64) for _ in range(self.batch)]
        self.backward = [np.empty(0, dtype=np.int64) for _ in range(self.batch)]

    def state(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "cursor": self.cursor,
                "forward": [b.tolist() for b in self.forward], "backward": [b.tolist() for b in self.backward]}

    def set_state(self, state: dict[str, Any]) -> None:
        self.epoch, self.cursor = int(state["epoch"]), int(state["cursor"])
        self._order = self._make_order(self.epoch)
        self.forward = [np.asarray(b, dtype=np.int64) for b in state["forward"]]
        self.backward = [np.asarray(b, dtype=np.int64) for b in state["backward"]]
