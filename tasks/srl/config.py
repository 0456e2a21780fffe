"""The keys of conf/task/srl.yaml's ``head:`` block: their types (Hydra checks them at composition,
elmo_bench.engine.config_schema) and ranges (checked before a run reads anything, elmo_bench.engine.config_check).
The values live in the YAML only (kwargs of SrlHead); torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task srl, in the order of conf/task/srl.yaml (a list's range holds for each item)."""

    hidden: int | None = ranged(None, int, 1)
    layers: int | None = ranged(None, int, 0)
    predicate_dim: int | None = ranged(None, int, 1)
    recurrent_dropout: float | None = ranged(None, float, 0, 1, high_open=True)
