"""The early-stopping rule in one place, without torch: the training loop applies it, run identity replays it to
decide whether a run may be continued under a raised cap, and the report replays it for results that predate
``epochs.stopped_by``."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence


@dataclass(frozen=True)
class StoppingRule:
    """Train at most ``max_epochs``; stop after ``patience`` epochs without a strictly better dev score, but never
    before ``min_epochs`` epochs ran."""

    max_epochs: int
    patience: int
    min_epochs: int = 0

    @classmethod
    def of(cls, settings: Any) -> "StoppingRule":
        """From anything with the three attributes (a TrainerConfig) or keys (a stored trainer config)."""
        get = settings.get if isinstance(settings, Mapping) else lambda key, default=None: getattr(settings, key,
                                                                                                    default)
        return cls(int(get("max_epochs")), int(get("patience")), int(get("min_epochs", 0) or 0))

    def patience_spent(self, epoch: int, best_epoch: int) -> bool:
        """No epoch ``epoch`` after ``patience`` epochs without beating ``best_epoch`` (−1 before any)."""
        return epoch - best_epoch > self.patience and best_epoch >= 0 and epoch >= self.min_epochs

    def stops_before(self, epoch: int, best_epoch: int) -> bool:
        """No epoch ``epoch`` at the cap or once the patience is spent."""
        return epoch >= self.max_epochs or self.patience_spent(epoch, best_epoch)

    def stopped_by(self, epochs_run: int, best_epoch: int) -> str:
        """Why a run of ``epochs_run`` epochs ended: "patience" (its dev curve had flattened) or "cap" (it was still
        within its patience of the best when the cap ended it: a sign the cap is too small)."""
        return "patience" if self.patience_spent(epochs_run, best_epoch) else "cap"

    def first_stop(self, dev_scores: Sequence[float]) -> int | None:
        """Replay the rule over a run's per-epoch dev scores: the first epoch it would not have trained, or None
        when it trains every one of them. None means continuing that run from its last checkpoint under this rule
        gives exactly the run a fresh start under it would give (epochs reseed; nothing else depends on the cap)."""
        best, best_epoch = -math.inf, -1
        for epoch, score in enumerate(dev_scores):
            if self.stops_before(epoch, best_epoch):
                return epoch
            if score > best:
                best, best_epoch = score, epoch
        return None
