"""The keys of conf/task/squad.yaml's ``head:`` block: their types (Hydra checks them at composition,
elmo_bench.engine.config_schema) and ranges (checked before a run reads anything, elmo_bench.engine.config_check).
The values live in the YAML only (kwargs of BidafSelfAttention); torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task squad, in the order of conf/task/squad.yaml (a list's range holds for each item)."""

    hidden_dim: int | None = ranged(None, int, 1)
    linear_dim: int | None = ranged(None, int, 1)
    dropout: float | None = ranged(None, float, 0, 1, high_open=True)
    use_chars: bool | None = None
    char_dim: int | None = ranged(None, int, 1)
    char_filters: int | None = ranged(None, int, 1)
    char_width: int | None = ranged(None, int, 1)
    max_span_length: int | None = ranged(None, int, 1)
