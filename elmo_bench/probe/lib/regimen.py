"""The probing papers' training regimen (control-tasks' ``ProbeRegimen``), for any probe over token features.

Adam (lr 1e-3, optional weight decay) on shuffled batches of 20 sentences; the loss of a batch is the summed token
cross-entropy divided by the batch's sentence count (the authors' normalisation). After every epoch the dev loss
(summed cross-entropy / dev sentences) is measured: the learning rate halves when it did not improve (PyTorch's
``ReduceLROnPlateau``, patience 0); parameters are kept when it fell by more than ``min_improvement``; training stops
after ``patience`` + 1 epochs without such a fall, or after ``max_epochs``. The probe returned carries the kept
(best-dev) parameters.

Entry point: :func:`train_probe` (per-sentence feature and label tensors in, a :class:`TrainedProbe` out);
:func:`predict` gives its predictions on other sentences.
"""
from __future__ import annotations

import copy
import logging
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import torch
from torch import nn

from elmo_bench.probe.lib.classifiers import ProbeSpec, build_probe

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Regimen:
    """The training knobs (recorded in results.json as they are)."""

    lr: float = 1e-3
    weight_decay: float = 0.0
    batch_sentences: int = 20
    max_epochs: int = 40
    patience: int = 4            # epochs without a dev-loss fall tolerated before stopping (the authors' 4)
    min_improvement: float = 1e-3
    seed: int = 0

    def record(self) -> dict:
        return asdict(self)


@dataclass
class TrainedProbe:
    probe: nn.Module                # best-dev parameters, eval mode, on the device it trained on
    dev_loss: float                 # summed cross-entropy / dev sentences, of the kept parameters
    dev_accuracy: float             # percent of dev tokens right (a label of -1 counts wrong)
    epochs: int                     # epochs trained
    best_epoch: int                 # 1-based epoch whose parameters were kept
    history: list[dict] = field(default_factory=list)   # per epoch: train_loss, dev_loss, lr


class Tokens:
    """Sentences as one flat (tokens, dim) tensor, labels (tokens,) and sentence offsets (sentences + 1,)."""

    def __init__(self, features: Sequence[torch.Tensor], labels: Sequence[torch.Tensor] | None,
                 device: torch.device | str = "cpu") -> None:
        if labels is not None and len(features) != len(labels):
            raise ValueError(f"{len(features)} feature tensors but {len(labels)} label tensors")
        lengths = torch.tensor([len(f) for f in features], dtype=torch.long)
        self.offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
        self.x = torch.cat([f.float() for f in features]).to(device) if features else torch.zeros(0, 1)
        self.y = torch.cat([y.long() for y in labels]).to(device) if labels is not None and labels else None
        if self.y is not None and len(self.y) != len(self.x):
            raise ValueError("every sentence needs one label per token")

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @classmethod
    def flat(cls, x: torch.Tensor, y: torch.Tensor | None, lengths: Sequence[int],
             device: torch.device | str = "cpu") -> "Tokens":
        """Sentences already concatenated: x (tokens, dim), y (tokens,) or None, tokens per sentence; a float32 x
        on ``device`` is held as it is (so problems given one tensor share it)."""
        tokens = cls.__new__(cls)
        counts = torch.as_tensor([int(n) for n in lengths], dtype=torch.long)
        tokens.offsets = torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)])
        tokens.x, tokens.y = x.float().to(device), None if y is None else y.long().to(device)
        if int(tokens.offsets[-1]) != len(tokens.x) or (tokens.y is not None and len(tokens.y) != len(tokens.x)):
            raise ValueError("every sentence needs its features and one label per token")
        return tokens

    def relabelled(self, labels: torch.Tensor) -> "Tokens":
        """The same sentences and features (shared, not copied) with other flat labels (tokens,)."""
        if len(labels) != len(self.x):
            raise ValueError("every sentence needs one label per token")
        other = copy.copy(self)
        other.y = labels.long().to(self.x.device)
        return other

    def rows(self, sentences: torch.Tensor) -> torch.Tensor:
        """Flat token rows of the given sentence ids (each sentence's rows in order, one arange and a shift per
        sentence, without a Python loop over the sentences)."""
        starts, lengths = self.offsets[sentences], self.offsets[sentences + 1] - self.offsets[sentences]
        shift = starts - (lengths.cumsum(0) - lengths)
        return torch.arange(int(lengths.sum())) + torch.repeat_interleave(shift, lengths)


def _loss_sum(probe: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return nn.functional.cross_entropy(probe(x), y, ignore_index=-1, reduction="sum")


@torch.no_grad()
def evaluate(probe: nn.Module, data: Tokens, chunk: int = 16384) -> tuple[float, float]:
    """(summed cross-entropy / sentences, token accuracy in percent) of ``probe`` on ``data``."""
    probe.eval()
    loss, right = 0.0, 0
    for start in range(0, len(data.x), chunk):
        x, y = data.x[start:start + chunk], data.y[start:start + chunk]
        logits = probe(x)
        loss += float(nn.functional.cross_entropy(logits, y, ignore_index=-1, reduction="sum"))
        right += int((logits.argmax(-1) == y).sum())
    return loss / max(1, len(data)), 100.0 * right / max(1, len(data.x))


@torch.no_grad()
def dev_loss_of(probe: nn.Module, data: Tokens, chunk: int = 16384) -> float:
    """``evaluate``'s loss alone (the same chunks and sums, so the same bits), without its argmax: what every
    epoch's stopping test reads."""
    probe.eval()
    loss = 0.0
    for start in range(0, len(data.x), chunk):
        loss += float(nn.functional.cross_entropy(probe(data.x[start:start + chunk]), data.y[start:start + chunk],
                                                  ignore_index=-1, reduction="sum"))
    return loss / max(1, len(data))


def _epoch(probe: nn.Module, optimiser: torch.optim.Optimizer, data: Tokens, batch: int,
           generator: torch.Generator) -> float:
    probe.train()
    order = torch.randperm(len(data), generator=generator)
    total = 0.0
    for start in range(0, len(order), batch):
        sentences = order[start:start + batch]
        rows = data.rows(sentences).to(data.x.device)
        optimiser.zero_grad()
        loss = _loss_sum(probe, data.x[rows], data.y[rows]) / len(sentences)
        loss.backward()
        optimiser.step()
        total += float(loss.detach()) * len(sentences)
    return total / max(1, len(data))


def train_probe(spec: ProbeSpec, train_x: Sequence[torch.Tensor], train_y: Sequence[torch.Tensor],
                dev_x: Sequence[torch.Tensor], dev_y: Sequence[torch.Tensor], num_classes: int,
                regimen: Regimen = Regimen(), device: torch.device | str = "cpu",
                build: Callable[[int, int], nn.Module] | None = None) -> TrainedProbe:
    """Train a fresh ``spec`` probe on per-sentence features (n_i, dim) and labels (n_i,) (-1 = ignored in the loss)
    with the regimen, choosing parameters on dev; the same seed and data give the same probe. ``build(dim,
    classes)`` makes the probe when given (a probe wrapping ``build_probe``'s, drawn under the same seed)."""
    return train_tokens(spec, Tokens(train_x, train_y, device), Tokens(dev_x, dev_y, device), num_classes, regimen,
                        device, build)


def train_tokens(spec: ProbeSpec, train: Tokens, dev: Tokens, num_classes: int, regimen: Regimen = Regimen(),
                 device: torch.device | str = "cpu", build: Callable[[int, int], nn.Module] | None = None
                 ) -> TrainedProbe:
    """``train_probe`` on sentences already gathered into ``Tokens`` (on ``device``)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(regimen.seed)
        probe = (build or (lambda dim, k: build_probe(spec, dim, k)))(train.x.shape[1], num_classes).to(device)
        generator = torch.Generator().manual_seed(regimen.seed)
        optimiser = torch.optim.Adam(probe.parameters(), lr=regimen.lr, weight_decay=regimen.weight_decay)
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimiser, mode="min", factor=0.5, patience=0)
        best_loss, best_epoch, best_state, history = float("inf"), 0, None, []
        for epoch in range(1, regimen.max_epochs + 1):
            train_loss = _epoch(probe, optimiser, train, regimen.batch_sentences, generator)
            dev_loss = dev_loss_of(probe, dev)
            history.append({"epoch": epoch, "train_loss": train_loss, "dev_loss": dev_loss,
                            "lr": optimiser.param_groups[0]["lr"]})
            plateau.step(dev_loss)
            log.info("probe %s epoch %d: train loss %.4f, dev loss %.4f, lr %g", spec.kind, epoch, train_loss,
                     dev_loss, history[-1]["lr"])
            if dev_loss < best_loss - regimen.min_improvement:
                best_loss, best_epoch, best_state = dev_loss, epoch, copy.deepcopy(probe.state_dict())
            elif epoch - best_epoch > regimen.patience:
                break
    if best_state is not None:
        probe.load_state_dict(best_state)
    dev_loss, dev_accuracy = evaluate(probe, dev)
    return TrainedProbe(probe, dev_loss, dev_accuracy, len(history), best_epoch, history)


@torch.no_grad()
def predict(probe: nn.Module, features: Sequence[torch.Tensor], chunk: int = 16384) -> torch.Tensor:
    """Predicted class per token of the sentences, flat (tokens,), on the CPU."""
    data = Tokens(features, None, next(probe.parameters()).device)
    probe.eval()
    return torch.cat([probe(data.x[s:s + chunk]).argmax(-1).cpu() for s in range(0, len(data.x), chunk)]) \
        if len(data.x) else torch.zeros(0, dtype=torch.long)
