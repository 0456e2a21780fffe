"""Online codelength (Voita & Titov 2020, lena-voita/description-length-probing; read, not copied), in bits.

The training sentences, in one seeded random order, are cut at ``int(f·N)`` for f in ``FRACTIONS``. The first block is
sent with the uniform code (its tokens × log₂ K, K the number of tags in the training set); every next block is sent
with a probe trained from scratch on all sentences before it (dev early stopping, best-dev parameters), costing
−Σ log₂ p(gold tag) over its tokens. Online codelength = the sum; uniform codelength = all training tokens × log₂ K;
compression = uniform / online. Everything is in bits: the authors' notebook adds the probes' natural-log losses to
a log₂ first block, so their published kbits mix units (state that beside any of their numbers).

The probe is a plug-in (``ProbeFactory``): a callable that trains a fresh probe on given sentences with dev early
stopping and returns a ``FittedProbe`` whose ``log_probs`` gives per-token natural-log class probabilities.
``LinearProbeTrainer`` is the built-in one (a linear softmax layer, the authors' regimen).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

import numpy as np
import torch
from torch import nn

from elmo_bench.base.errors import ConfigError
from elmo_bench.probe.lib.regimen import Tokens
from elmo_bench.probe.lib.stacked import Stack, StackedAdam, StackedChain, Track, loaded

FRACTIONS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.0625, 0.125, 0.25, 0.5, 1.0)
#: the setting that sizes the training set (``elmo-bench probe-mdl`` names its flag, ``--max-train-sentences``)
TRAIN_KEY = "probe.max_train_sentences"


@dataclass
class TokenData:
    """Tokens of whole sentences: ``features`` (n_tokens, dim) float32, ``labels`` (n_tokens,) int64 (−1: a tag
    outside the classes), ``lengths`` (n_sentences,) tokens per sentence, in order."""

    features: np.ndarray
    labels: np.ndarray
    lengths: np.ndarray

    def __len__(self) -> int:
        return len(self.lengths)

    def take(self, sentences: Sequence[int]) -> "TokenData":
        """The given sentences, in the given order."""
        starts = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)
        index = [np.arange(starts[s], starts[s] + self.lengths[s]) for s in sentences]
        rows = np.concatenate(index) if index else np.zeros(0, dtype=np.int64)
        return TokenData(self.features[rows], self.labels[rows], self.lengths[list(sentences)])


class FittedProbe(Protocol):
    def log_probs(self, data: TokenData) -> np.ndarray:
        """(n_tokens, K) natural-log class probabilities of every token of ``data``."""


#: (train, dev, seed) → a probe trained from scratch on ``train`` with early stopping on ``dev``
ProbeFactory = Callable[[TokenData, TokenData, int], FittedProbe]


def block_ends(n: int, fractions: Sequence[float] = FRACTIONS) -> list[int]:
    """Where each block ends: ``int(f·n)`` per fraction, exactly as the authors cut their portions."""
    return [int(f * n) for f in fractions]


def empty_block(n: int, fractions: Sequence[float] = FRACTIONS) -> int | None:
    """Index of the first block with no sentence, or None."""
    ends = block_ends(n, fractions)
    for i, end in enumerate(ends):
        if end <= (ends[i - 1] if i else 0):
            return i
    return None


def check_blocks(n: int, fractions: Sequence[float] = FRACTIONS) -> None:
    """ConfigError naming the first empty block and the smallest training-set size that leaves none empty."""
    i = empty_block(n, fractions)
    if i is None:
        return
    smallest = next(m for m in range(1, 10 ** 7) if empty_block(m, fractions) is None)
    low = f"{fractions[i - 1]}" if i else "0"
    raise ConfigError(f"online code: block {i + 1} (sentences {low}·N to {fractions[i]}·N, N = {n}) has no sentence; "
                      f"expected {TRAIN_KEY} of at least {smallest} for this schedule", key=TRAIN_KEY)


@dataclass
class OnlineCode:
    """One online codelength: ``blocks`` [{"end", "tokens", "bits"}], totals in bits, and the probe on all blocks."""

    blocks: list[dict[str, Any]]
    online_bits: float
    uniform_bits: float
    final: Any = field(repr=False, default=None)

    @property
    def compression(self) -> float:
        return self.uniform_bits / self.online_bits if self.online_bits > 0 else math.inf

    def summary(self) -> dict[str, Any]:
        return {"online_bits": round(self.online_bits, 2), "uniform_bits": round(self.uniform_bits, 2),
                "compression": round(self.compression, 4),
                "blocks": [{"end": b["end"], "bits": round(b["bits"], 2)} for b in self.blocks]}


def gold_bits(log_probs: np.ndarray, labels: np.ndarray) -> float:
    """−Σ log₂ p(gold) over tokens; ``log_probs`` (n, K) natural logs."""
    return float(-log_probs[np.arange(len(labels)), labels].sum() / math.log(2))


def online_codelength(train: TokenData, dev: TokenData, num_classes: int, factory: ProbeFactory, seed: int = 0,
                      fractions: Sequence[float] = FRACTIONS) -> OnlineCode:
    """The online code of ``train``'s labels (see the module docstring); training labels must lie in 0..K−1."""
    n = len(train)
    check_blocks(n, fractions)
    shuffled = train.take(np.random.RandomState(seed).permutation(n).tolist())
    ends = block_ends(n, fractions)
    first = int(shuffled.lengths[: ends[0]].sum())
    per_token = math.log2(num_classes)
    blocks = [{"end": ends[0], "tokens": first, "bits": first * per_token}]
    for i in range(1, len(ends)):
        probe = factory(shuffled.take(range(ends[i - 1])), dev, seed + i)
        block = shuffled.take(range(ends[i - 1], ends[i]))
        blocks.append({"end": ends[i], "tokens": int(block.lengths.sum()),
                       "bits": gold_bits(probe.log_probs(block), block.labels)})
    final = factory(shuffled, dev, seed)
    return OnlineCode(blocks, sum(b["bits"] for b in blocks), int(train.lengths.sum()) * per_token, final)


#: (trains, devs, seed) → a probe per problem, each what ``ProbeFactory`` gives on that problem alone
ManyFactory = Callable[[Sequence[TokenData], Sequence[TokenData], int], list[FittedProbe]]


def _take_all(problems: Sequence[TokenData], sentences: Sequence[int]) -> list[TokenData]:
    """``take`` of every problem (the same sentences, the rows ``take`` takes), problems given one feature or label
    array sharing its copy (the stacked trainer then holds it once)."""
    lengths = problems[0].lengths
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    index = [np.arange(starts[s], starts[s] + lengths[s]) for s in sentences]
    rows = np.concatenate(index) if index else np.zeros(0, dtype=np.int64)
    copies: dict[int, np.ndarray] = {}

    def pick(array: np.ndarray) -> np.ndarray:
        if id(array) not in copies:
            copies[id(array)] = array[rows]
        return copies[id(array)]

    return [TokenData(pick(d.features), pick(d.labels), lengths[list(sentences)]) for d in problems]


def online_codelengths(trains: Sequence[TokenData], devs: Sequence[TokenData], num_classes: int, many: ManyFactory,
                       seed: int = 0, fractions: Sequence[float] = FRACTIONS) -> list[OnlineCode]:
    """``online_codelength`` of every problem (its training and dev tokens; every problem the same sentences), the
    probes of one block trained by one call of ``many``: problem i's code is the one it gets alone."""
    n = len(trains[0])
    check_blocks(n, fractions)
    if any(not np.array_equal(t.lengths, trains[0].lengths) for t in trains):
        raise ValueError("online codes together: every problem needs the same training sentences")
    shuffled = _take_all(trains, np.random.RandomState(seed).permutation(n).tolist())
    ends = block_ends(n, fractions)
    first = int(shuffled[0].lengths[: ends[0]].sum())
    per_token = math.log2(num_classes)
    blocks: list[list[dict[str, Any]]] = [[{"end": ends[0], "tokens": first, "bits": first * per_token}]
                                          for _ in trains]
    for i in range(1, len(ends)):
        probes = many(_take_all(shuffled, range(ends[i - 1])), devs, seed + i)
        block = _take_all(shuffled, range(ends[i - 1], ends[i]))
        for b, probe in enumerate(probes):
            blocks[b].append({"end": ends[i], "tokens": int(block[b].lengths.sum()),
                              "bits": gold_bits(probe.log_probs(block[b]), block[b].labels)})
    finals = many(shuffled, devs, seed)
    return [OnlineCode(found, sum(b["bits"] for b in found), int(trains[0].lengths.sum()) * per_token, final)
            for found, final in zip(blocks, finals)]


def accuracy(probe: FittedProbe, data: TokenData) -> float:
    """Token accuracy in percent (a label −1 is always wrong)."""
    if not len(data.labels):
        return 0.0
    return 100.0 * float((probe.log_probs(data).argmax(1) == data.labels).mean())


class FittedLinear:
    """A trained ``nn.Linear`` (dim → K) read as a softmax classifier."""

    def __init__(self, layer: nn.Linear) -> None:
        self.layer = layer.eval()

    def log_probs(self, data: TokenData) -> np.ndarray:
        with torch.no_grad():
            out = [torch.log_softmax(self.layer(torch.from_numpy(data.features[a:a + 8192])), -1)
                   for a in range(0, len(data.features), 8192)]
        return torch.cat(out).numpy() if out else np.zeros((0, self.layer.out_features), dtype=np.float32)


def _sentence_batches(data: TokenData, batch_size: int) -> list[tuple[slice, int]]:
    """Consecutive groups of ``batch_size`` sentences as token slices, with their sentence counts."""
    ends = np.concatenate([[0], np.cumsum(data.lengths)]).astype(np.int64)
    return [(slice(int(ends[a]), int(ends[min(a + batch_size, len(data))])), min(batch_size, len(data) - a))
            for a in range(0, len(data), batch_size)]


def _loss(layer: nn.Linear, x: torch.Tensor, y: torch.Tensor, sentences: int) -> torch.Tensor:
    """The authors' cross-entropy: summed over tokens (−1 ignored), divided by the batch's sentences."""
    return nn.functional.cross_entropy(layer(x), y, ignore_index=-1, reduction="sum") / sentences


@dataclass
class LinearProbeTrainer:
    """The built-in ``ProbeFactory``: linear softmax, Adam lr 1e-3, batches of 20 sentences in the given order,
    ReduceLROnPlateau ×0.5 (patience 0) on the dev loss, best-dev parameters kept when the mean dev loss per
    sentence improves by more than 1e-3, stop after 5 epochs without that, at most ``max_epochs`` (40) — the
    settings of the authors' online-code configs and regimen."""

    num_classes: int
    lr: float = 1e-3
    batch_size: int = 20
    max_epochs: int = 40
    patience: int = 5
    min_improvement: float = 1e-3
    lr_factor: float = 0.5

    def dev_loss(self, layer: nn.Linear, dev: TokenData) -> float:
        with torch.no_grad():
            total = sum(float(_loss(layer, torch.from_numpy(dev.features[s]), torch.from_numpy(dev.labels[s]), 1))
                        for s, _ in _sentence_batches(dev, 4096))
        return total / max(len(dev), 1)

    def __call__(self, train: TokenData, dev: TokenData, seed: int) -> FittedLinear:
        torch.manual_seed(seed)
        layer = nn.Linear(train.features.shape[1], self.num_classes)
        optimiser = torch.optim.Adam(layer.parameters(), lr=self.lr)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimiser, mode="min", factor=self.lr_factor,
                                                               patience=0)
        x, y = torch.from_numpy(train.features), torch.from_numpy(train.labels)
        batches = _sentence_batches(train, self.batch_size)
        best, best_epoch, best_state = float("inf"), -1, copy.deepcopy(layer.state_dict())
        for epoch in range(self.max_epochs):
            layer.train()
            for tokens, sentences in batches:
                optimiser.zero_grad()
                _loss(layer, x[tokens], y[tokens], sentences).backward()
                optimiser.step()
            loss = self.dev_loss(layer.eval(), dev)
            scheduler.step(loss)
            if loss < best - self.min_improvement:
                best, best_epoch, best_state = loss, epoch, copy.deepcopy(layer.state_dict())
            elif best_epoch < epoch - (self.patience - 1):
                break
        layer.load_state_dict(best_state)
        return FittedLinear(layer)

    def many(self, trains: Sequence[TokenData], devs: Sequence[TokenData], seed: int) -> list[FittedLinear]:
        """``self(train, dev, seed)`` of every problem (the same sentences and width), the problems' layers stacked
        (elmo_bench.probe.lib.stacked: the same GEMMs, one Adam state, each problem's own plateau, stop and kept
        epoch): problem i's probe is the one the call trains on it alone."""
        torch.manual_seed(seed)
        template = nn.Sequential(nn.Linear(trains[0].features.shape[1], self.num_classes))
        chain, adam = StackedChain(template, len(trains), "cpu"), StackedAdam()
        train, dev = _stack(trains), _stack(devs)
        tracks = [Track.start(self.lr, self.lr_factor) for _ in trains]
        for track, b in zip(tracks, range(len(trains))):
            track.best_epoch, track.best = -1, chain.slices(b)
        active = torch.arange(len(trains))
        batches, dev_batches = _sentence_batches(trains[0], self.batch_size), _sentence_batches(devs[0], 4096)
        for epoch in range(self.max_epochs):
            lrs = [tracks[int(b)].lr for b in active]
            for tokens, sentences in batches:
                x, y = train.batch(torch.arange(tokens.start, tokens.stop), active)
                for p in chain.params:
                    p.grad = None
                logits = chain.forward(x)
                torch.stack([nn.functional.cross_entropy(logits[b], y[b], ignore_index=-1, reduction="sum")
                             / sentences for b in range(len(active))]).sum().backward()
                adam.update(chain.params, lrs)
            losses = self._dev_losses(chain, dev, active, dev_batches, len(devs[0]))
            going = [at for at, b in enumerate(active) if not self._judge(tracks[int(b)], chain, at, epoch,
                                                                          losses[at])]
            if len(going) < len(active):
                keep = torch.tensor(going, dtype=torch.long)
                active = active[keep]
                chain.keep(keep)
                adam.keep(keep)
            if not len(active):
                break
        return [FittedLinear(loaded(template, track.best)[0]) for track in tracks]

    @staticmethod
    @torch.no_grad()
    def _dev_losses(chain: StackedChain, dev: Stack, active: torch.Tensor, batches: list[tuple[slice, int]],
                    sentences: int) -> list[float]:
        """``dev_loss`` of every active problem (the same chunks, each chunk's loss / 1, summed in order), one problem
        at a time (lib.stacked._dev_losses says why)."""
        totals = [0] * len(active)
        for at, b in enumerate(active.tolist()):
            view, labels = int(dev.view[b]), int(dev.labels[b])
            for tokens, _ in batches:
                logits = chain.forward(dev.x[view, tokens].unsqueeze(0), at)[0]
                totals[at] += float(nn.functional.cross_entropy(logits, dev.y[labels, tokens], ignore_index=-1,
                                                                reduction="sum") / 1)
        return [total / max(sentences, 1) for total in totals]

    def _judge(self, track: Track, chain: StackedChain, at: int, epoch: int, loss: float) -> bool:
        """``__call__``'s end of an epoch for one problem (its plateau, kept parameters): True when it stops."""
        track.plateau.step(loss)
        if loss < track.best_loss - self.min_improvement:
            track.best_loss, track.best_epoch, track.best = loss, epoch, chain.slices(at)
            return False
        return track.best_epoch < epoch - (self.patience - 1)


def _stack(problems: Sequence[TokenData]) -> Stack:
    """The problems' tokens stacked (elmo_bench.probe.lib.stacked.Stack), an array shared by problems held once."""
    tensors: dict[int, torch.Tensor] = {}
    for data in problems:
        for array in (data.features, data.labels):
            if id(array) not in tensors:
                tensors[id(array)] = torch.from_numpy(array)
    return Stack.of([Tokens.flat(tensors[id(d.features)], tensors[id(d.labels)], d.lengths) for d in problems])
