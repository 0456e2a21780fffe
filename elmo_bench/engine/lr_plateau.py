"""Halving the learning rate when the dev score stops improving (jiant v1's edge-probing regimen), as a pure replay
of the per-epoch dev scores: no scheduler state to checkpoint, so a run resumed after epoch k takes the rate the
uninterrupted run would have taken (elmo_bench.engine.loop.fit sets it before every epoch).

The rule is torch's ``ReduceLROnPlateau`` as jiant v1 configures it for edge probing (``jiant/trainer.py``
``build_trainer``; ``jiant/config/defaults.conf``; ``jiant/config/edgeprobe/edgeprobe_bare.conf``): mode ``max`` on
the validation F1, ``factor`` 0.5, ``patience`` 5, ``threshold`` 1e-4 in ``abs`` mode, no cooldown; training stops
once the rate falls below ``min_lr`` (1e-6), checked right after the validation that lowered it. One of our epochs
is one of jiant's validation checks (docs/edge-probing.md)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

#: torch's ReduceLROnPlateau skips a reduction smaller than this (its ``eps``); jiant's min_lr stops far above it
TORCH_EPS = 1e-8


@dataclass(frozen=True)
class LrPlateau:
    """An epoch's dev score counts as an improvement when it exceeds the best so far by more than ``threshold``
    (absolute, in the metric's own units); after more than ``patience`` epochs in a row without one, the rate is
    multiplied by ``factor`` and the count starts again (the best so far is kept). ``min_lr``: a rate below it ends
    training (None: never)."""

    lr: float
    factor: float
    patience: int
    threshold: float = 0.0
    min_lr: float | None = None

    @classmethod
    def of(cls, trainer: Any) -> "LrPlateau | None":
        """From a TrainerConfig (``lr_plateau_*`` fields); None when ``lr_plateau_factor`` is null (the schedule is
        off and the rate stays ``lr``)."""
        if trainer.lr_plateau_factor is None:
            return None
        return cls(float(trainer.lr), float(trainer.lr_plateau_factor), int(trainer.lr_plateau_patience),
                   float(trainer.lr_plateau_threshold or 0.0), trainer.lr_plateau_min_lr)

    def rates(self, dev_scores: Sequence[float]) -> list[float]:
        """The rate of every epoch: ``rates(s)[e]`` trains epoch e after the dev scores ``s[:e]``; one more entry
        than ``dev_scores`` (the last: the rate the next epoch would take)."""
        best, bad, lr = -math.inf, 0, self.lr
        out = [lr]
        for score in dev_scores:
            if score > best + self.threshold:
                best, bad = score, 0
            else:
                bad += 1
            if bad > self.patience:
                lr, bad = (lr * self.factor if lr - lr * self.factor > TORCH_EPS else lr), 0
            out.append(lr)
        return out

    def next_rate(self, dev_scores: Sequence[float]) -> float:
        """The rate of the epoch after those scored ``dev_scores``."""
        return self.rates(dev_scores)[-1]

    def spent(self, lr: float) -> bool:
        """A rate this low ends training (``min_lr``)."""
        return self.min_lr is not None and lr < self.min_lr
