"""The MLP-1 family of conditional probing: the control-task regimen's MLP-1 (elmo_bench.probe.lib.classifiers, trained
by elmo_bench.probe.lib.regimen: Adam on batches of sentences, the learning rate halved and training stopped on the dev
loss, the best-dev parameters kept), fitted on B and on [B; ℓ] and scored as −log2 p(gold) per test token.

The word baseline joins the word type to the input as a learned lookup: E[word] (types + 1, hidden) is added to the
first layer's pre-activation, i.e. MLP-1 on [x; one-hot(word)] without building the one-hot (row 0 shared by every
type unseen in training), E drawn as nn.Linear draws a one-hot column's weights. With no dense input (B = word
alone) the dense part is one zero column, which adds nothing. Features go in unscaled, as the regimen's probes take
them (the authors' probes do too).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from elmo_bench.probe.lib.classifiers import ProbeSpec, build_probe
from elmo_bench.probe.lib.regimen import Regimen, Tokens, TrainedProbe, train_probe
from elmo_bench.probe.lib.stacked import train_probes

LOG2 = math.log(2.0)
SPLITS = ("train", "dev", "test")


class WordJoined(nn.Module):
    """MLP-1 over [dense; one-hot(word)]: the input's last column carries the word id, the rest the dense features."""

    def __init__(self, mlp: nn.Sequential, dense_dim: int, vocabulary_size: int, hidden: int) -> None:
        super().__init__()
        self.mlp = mlp
        self.table = nn.Embedding(vocabulary_size, hidden)
        bound = 1.0 / math.sqrt(dense_dim + vocabulary_size)
        nn.init.uniform_(self.table.weight, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first = self.mlp[1](self.mlp[0](x[:, :-1])) + self.table(x[:, -1].long())   # dropout, W1 x + b1, + E[w]
        return self.mlp[2:](first)                                                  # relu, W2 · + b2


@dataclass
class MlpFit:
    """One MLP-1 fit: bits (−log2 p(gold)) and accuracy (%) on the test tokens whose label occurs in training."""

    bits: np.ndarray
    accuracy: float
    epochs: int
    best_epoch: int


def inputs(dense: np.ndarray | None, words: torch.Tensor | None, tokens: int) -> torch.Tensor:
    """(tokens, dim [+ 1]) float32: the dense features (or one zero column) with the word ids as a last column."""
    x = torch.zeros(tokens, 1) if dense is None else torch.from_numpy(np.ascontiguousarray(dense, dtype=np.float32))
    return x if words is None else torch.cat([x, words.float()[:, None]], dim=1)


@torch.no_grad()
def test_bits(probe: nn.Module, x: torch.Tensor, y: torch.Tensor, chunk: int = 16384) -> tuple[np.ndarray, float]:
    """(−log2 p(y) per token, accuracy %) of ``probe`` on tokens ``x`` (n, dim), labels ``y`` (n,) all ≥ 0."""
    probe.eval()
    device = next(probe.parameters()).device
    bits, right = [], 0
    for start in range(0, len(x), chunk):
        logp = torch.log_softmax(probe(x[start:start + chunk].to(device)).double(), dim=-1).cpu()
        gold = y[start:start + chunk]
        bits.append(-logp.gather(1, gold[:, None])[:, 0] / LOG2)
        right += int((logp.argmax(-1) == gold).sum())
    values = torch.cat(bits).numpy() if bits else np.zeros(0)
    return values, 100.0 * right / max(1, len(x))


def fit_mlp1(dense: Mapping[str, np.ndarray] | None, words: Mapping[str, torch.Tensor] | None,
             y: Mapping[str, np.ndarray], lengths: Mapping[str, list[int]], classes: int, vocabulary_size: int,
             spec: ProbeSpec, regimen: Regimen, device: torch.device | str = "cpu") -> MlpFit:
    """MLP-1 trained with ``regimen`` on train (dev: early stopping) over ``dense`` and/or ``words`` per split;
    labels -1 (unseen in training) are ignored in the dev loss and left out of the test scores."""
    x = {s: inputs(None if dense is None else dense[s], None if words is None else words[s], int(sum(lengths[s])))
         for s in SPLITS}
    labels = {s: torch.from_numpy(np.asarray(y[s], dtype=np.int64)) for s in SPLITS}
    parts = {s: (torch.split(x[s], list(lengths[s])), torch.split(labels[s], list(lengths[s]))) for s in SPLITS}
    dense_dim = x["train"].shape[1] - (words is not None)
    trained = train_probe(spec, *parts["train"], *parts["dev"], classes, regimen, device,
                          _builder(spec, dense_dim, words is not None, vocabulary_size))
    return _scored(trained, x["test"], labels["test"])


def _builder(spec: ProbeSpec, dense_dim: int, word: bool, vocabulary_size: int) -> Callable[[int, int], nn.Module]:
    """The probe's maker: MLP-1 over the dense part, with the word lookup joined when ``word``."""
    def build(dim: int, k: int) -> nn.Module:
        mlp = build_probe(spec, dense_dim, k)
        return WordJoined(mlp, dense_dim, vocabulary_size, spec.hidden) if word else mlp

    return build


def _scored(trained: TrainedProbe, x: torch.Tensor, labels: torch.Tensor) -> MlpFit:
    seen = labels >= 0
    bits, accuracy = test_bits(trained.probe, x[seen], labels[seen])
    return MlpFit(bits, accuracy, trained.epochs, trained.best_epoch)


def fit_mlp1_many(denses: Sequence[Mapping[str, np.ndarray] | None], words: Mapping[str, torch.Tensor] | None,
                  y: Mapping[str, np.ndarray], lengths: Mapping[str, list[int]], classes: int, vocabulary_size: int,
                  spec: ProbeSpec, regimen: Regimen, device: torch.device | str = "cpu",
                  stacked: bool = True) -> list[MlpFit]:
    """``fit_mlp1`` of every input of ``denses`` (one width; the same labels), trained together
    (elmo_bench.probe.lib.stacked: each fit the one ``fit_mlp1`` gives alone; with the word lookup, or
    ``stacked=False``, one by one)."""
    labels = {s: torch.from_numpy(np.asarray(y[s], dtype=np.int64)).to(device) for s in SPLITS}
    xs = [{s: inputs(None if dense is None else dense[s], None if words is None else words[s], int(sum(lengths[s])))
           for s in SPLITS} for dense in denses]
    trains = [Tokens.flat(x["train"], labels["train"], lengths["train"], device) for x in xs]
    devs = [Tokens.flat(x["dev"], labels["dev"], lengths["dev"], device) for x in xs]
    dense_dim = xs[0]["train"].shape[1] - (words is not None)
    trained = train_probes(spec, trains, devs, classes, regimen, device,
                           _builder(spec, dense_dim, words is not None, vocabulary_size), stacked)
    return [_scored(t, x["test"], labels["test"].cpu()) for t, x in zip(trained, xs)]
