"""The keys of conf/task/ner.yaml's ``head:`` block: their types (Hydra checks them at composition,
elmo_bench.engine.config_schema) and ranges (checked before a run reads anything, elmo_bench.engine.config_check).
The values live in the YAML only (kwargs of NerHead); torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task ner, in the order of conf/task/ner.yaml (a list's range holds for each item)."""

    char_dim: int | None = ranged(None, int, 1)
    char_filters: int | None = ranged(None, int, 1)
    char_width: int | None = ranged(None, int, 1)
    lstm_hidden: list[int] | None = ranged(None, int, 1)
    dropout: float | None = ranged(None, float, 0, 1, high_open=True)
    constrain_decoding: bool | None = None
