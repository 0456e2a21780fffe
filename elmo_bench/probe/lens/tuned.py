"""The tuned lens (Belrose et al. 2023, after EleutherAI/tuned-lens's definitions, written anew): per stream below
the last layer an affine translator ``h ↦ h + A h + b`` with A and b zero at the start, so that an untrained
tuned lens is the logit lens and weight decay pulls it towards the identity; the last layer has none (it is the
distribution the others are fitted to). Trained on the training split's text to minimise KL(final ‖ lens), the
final layer's distribution at the same position against the lens's, in nats per prediction, every stream's mean
summed into one loss (the streams share no parameter); the model and its head stay frozen. SGD with Nesterov
momentum 0.9, step ``probe.lr`` decayed linearly to 0 over ``probe.max_epochs`` passes, weight decay 1e-3, the
gradient's norm clipped to 1 (the authors' defaults, their step being 1 − momentum)."""
from __future__ import annotations

import logging
from typing import Any, Sequence

import numpy as np
import torch

log = logging.getLogger(__name__)
MOMENTUM = 0.9
WEIGHT_DECAY = 1e-3
#: the gradient's norm over every translator is clipped to this before each step
CLIP_NORM = 1.0


def stream_name(layer: int, direction: str) -> str:
    """The translator's key in the module dict."""
    return f"layer_{layer}_{direction}"


class Translators(torch.nn.Module):
    """One zero-initialised affine map per stream below the last layer, added to the stream (see the module
    docstring); a stream without one (the last layer) passes unchanged."""

    def __init__(self, streams: Sequence[tuple[int, str]], width: int) -> None:
        super().__init__()
        self.maps = torch.nn.ModuleDict()
        for layer, direction in streams:
            linear = torch.nn.Linear(width, width)
            torch.nn.init.zeros_(linear.weight)
            torch.nn.init.zeros_(linear.bias)
            self.maps[stream_name(layer, direction)] = linear

    def forward(self, hidden: torch.Tensor, layer: int, direction: str) -> torch.Tensor:
        """The stream's vectors moved by its translator (residually: zero weights are the identity)."""
        name = stream_name(layer, direction)
        return hidden + self.maps[name](hidden) if name in self.maps else hidden


def kl_to_final(final: torch.Tensor, lens: torch.Tensor) -> torch.Tensor:
    """KL(final ‖ lens) per position (nats) from two log-probability rows (positions, V)."""
    return (final.exp() * (final - lens)).sum(-1)


def batch_loss(readout: Any, translators: Translators, batch: Sequence[Sequence[str]],
               layers: Sequence[int]) -> torch.Tensor:
    """The summed per-stream mean KL(final ‖ tuned lens) of one batch."""
    streams = readout.streams(batch, sorted({*layers, readout.top}))
    loss = torch.zeros((), device=readout.device)
    for direction in readout.directions:
        with torch.no_grad():
            final = readout.logits(streams.hidden[(readout.top, direction)], readout.top).log_softmax(-1)
        for layer in layers:
            if layer == readout.top:
                continue
            moved = translators(streams.hidden[(layer, direction)], layer, direction)
            loss = loss + kl_to_final(final, readout.logits(moved, layer).log_softmax(-1)).mean()
    return loss


def batches(sentences: Sequence[Sequence[str]], size: int) -> list[list[list[str]]]:
    """Sentences sorted by length (less padding), cut into batches of ``size``."""
    ordered = sorted((list(s) for s in sentences), key=len)
    return [ordered[i: i + size] for i in range(0, len(ordered), size)]


def train(readout: Any, layers: Sequence[int], sentences: Sequence[Sequence[str]], settings: Any,
          seed: int) -> tuple[Translators, list[float]]:
    """The translators of ``layers`` (the last layer excluded) fitted on ``sentences``, and the mean training loss
    (KL in bits per prediction, summed over streams) of each epoch."""
    streams = [(k, d) for k in layers if k != readout.top for d in readout.directions]
    width = readout.head.weight.shape[1]
    translators = Translators(streams, width).to(readout.device)
    history: list[float] = []
    if not streams or not sentences:
        return translators, history
    chunks = batches(sentences, settings.batch_size)
    optimiser = torch.optim.SGD(translators.parameters(), lr=settings.lr, momentum=MOMENTUM, nesterov=True,
                                weight_decay=WEIGHT_DECAY)
    steps = settings.max_epochs * len(chunks)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: 1.0 - step / steps)
    rng = np.random.default_rng(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for epoch in range(settings.max_epochs):
            total = 0.0
            for index in rng.permutation(len(chunks)):
                loss = batch_loss(readout, translators, chunks[index], layers)
                optimiser.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(translators.parameters(), CLIP_NORM)
                optimiser.step()
                schedule.step()
                total += float(loss.detach())
            history.append(total / len(chunks) / np.log(2))
            log.info("lens: tuned lens epoch %d, KL(final ‖ lens) %.4f bits summed over %d streams", epoch + 1,
                     history[-1], len(streams))
    translators.eval()
    return translators, history
