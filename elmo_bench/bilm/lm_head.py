"""The biLM's language-model head: the softmax its export keeps (``softmax/W``, ``softmax/b`` in the weights file,
shared by the forward and the backward LM) and the vocabulary beside it (``vocab.txt``: ``<S>``, ``</S>``,
``<UNK>`` and the words), for what scores the LM itself (``probe=amnesic_lm``). Every sentence is scored as
``<S> w1 .. wn </S>`` from a zero state: the forward LM predicts ``w1 .. wn </S>``, the backward LM ``wn .. w1 <S>``
(elmo_bench.pretrain.perplexity scores the same way)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import torch
from torch.nn import functional as F

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.kinds import kind_of

SPECIALS = ("<S>", "</S>", "<UNK>")


@dataclass
class LmHead:
    """The shared softmax (weight (V, P), bias (V,)) and the vocabulary's ids."""

    weight: torch.Tensor
    bias: torch.Tensor
    index: dict[str, int]

    def targets(self, sentences: Sequence[Sequence[str]], time: int) -> torch.Tensor:
        """(batch, time) ids of ``<S> w1 .. wn </S>`` per row (out-of-vocabulary words as ``<UNK>``), 0 past it."""
        out = torch.zeros(len(sentences), time, dtype=torch.long)
        unk = self.index["<UNK>"]
        for row, words in enumerate(sentences):
            ids = [self.index["<S>"], *(self.index[w] if w in self.index else unk for w in words), self.index["</S>"]]
            out[row, : len(ids)] = torch.tensor(ids)
        return out

    def log_probs(self, top: torch.Tensor) -> torch.Tensor:
        """(2, batch, time − 1, V) log-probabilities from the top layer (batch, time, 2P) with boundaries: the
        forward LM at positions 0 .. time − 2 (predicting the next token), the backward at 1 .. time − 1."""
        half = top.shape[-1] // 2
        forward = F.linear(top[:, :-1, :half], self.weight, self.bias)
        backward = F.linear(top[:, 1:, half:], self.weight, self.bias)
        return torch.stack([forward, backward]).log_softmax(-1)


def read_vocab(path: Path) -> dict[str, int]:
    """token → id of a bilm-tf vocabulary file (one token a line; ``<S>``, ``</S>``, ``<UNK>`` required)."""
    tokens = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    index = {token: i for i, token in enumerate(tokens)}
    missing = [s for s in SPECIALS if s not in index]
    if missing or len(index) != len(tokens):
        raise ConfigError(f"{path}: expected one distinct token a line with <S>, </S>, <UNK>; "
                          f"{'lacks ' + ', '.join(missing) if missing else 'has duplicate tokens'}")
    return index


def load_lm_head(weights: str | Path, what: str) -> LmHead:
    """The softmax of the biLM in ``weights`` and ``vocab.txt`` beside it; one ConfigError line naming ``what``
    (the probe) when either is missing or they disagree (a biLM exported without its LM head)."""
    import h5py  # lazy: h5py

    weights = Path(weights)
    vocab = weights.parent / "vocab.txt"
    with h5py.File(weights, "r") as handle:
        if "softmax/W" not in handle or "softmax/b" not in handle:
            raise ConfigError(f"{what}: {weights.name} has no softmax/W, softmax/b (a biLM without its LM head); use "
                              f"a biLM exported with its softmax (bilm=shipped or one elmo-bench pretrain made)")
        weight = torch.from_numpy(handle["softmax/W"][...]).float()
        bias = torch.from_numpy(handle["softmax/b"][...]).float()
    if not vocab.is_file():
        raise ConfigError(f"{what}: no vocab.txt beside {weights.name} (the softmax's vocabulary)")
    index = read_vocab(vocab)
    if weight.shape[0] != len(index):
        raise ConfigError(f"{what}: softmax/W has {weight.shape[0]} rows, {vocab.name} {len(index)} tokens")
    return LmHead(weight, bias, index)


def head_for(encoder: Any, what: str) -> LmHead:
    """The LM head of a trained biLM encoder; one line for an encoder without one (another kind, a random biLM)."""
    identity = encoder.identity()
    has_head = kind_of(identity).lm_head
    if not has_head or "random_init" in identity:
        kind = identity["kind"] if not has_head else f"{identity['kind']} random_init={identity['random_init']}"
        raise ConfigError(f"{what}: needs a trained biLM with its softmax (an LM head); encoder {kind} has none")
    return load_lm_head(encoder.info["weights"], what)
