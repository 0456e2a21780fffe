"""The keys of conf/task/edge_coref.yaml's ``head:`` block (kwargs of elmo_bench.modules.edge_head.EdgeHead): their
types (checked at composition) and ranges (checked before a run reads anything); torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task edge_coref, in the order of conf/task/edge_coref.yaml."""

    proj_dim: int | None = ranged(None, int, 1)
    hidden_dim: int | None = ranged(None, int, 1)
    dropout: float | None = ranged(None, float, 0, 1, high_open=True)
