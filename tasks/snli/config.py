"""The keys of conf/task/snli.yaml's ``head:`` block: their types (Hydra checks them at composition,
elmo_bench.engine.config_schema) and ranges (checked before a run reads anything, elmo_bench.engine.config_check).
The values live in the YAML only (kwargs of Esim); torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task snli, in the order of conf/task/snli.yaml (a list's range holds for each item)."""

    hidden_dim: int | None = ranged(None, int, 1)
    projection_dim: int | None = ranged(None, int, 1)
    mlp_dim: int | None = ranged(None, int, 1)
    dropout: float | None = ranged(None, float, 0, 1, high_open=True)
