"""The keys of every edge-probing task's ``head:`` block (conf/task/edge_*.yaml; kwargs of
elmo_bench.modules.edge_head.EdgeHead): their types (checked at composition) and ranges (checked before a run reads
anything). One dataclass for the six tasks, whose heads are the same; torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged


@dataclass(frozen=True)
class EdgeHeadConfig:
    """``task.head`` of an edge task, in the order of its YAML."""

    proj_dim: int | None = ranged(None, int, 1)
    hidden_dim: int | None = ranged(None, int, 1)
    dropout: float | None = ranged(None, float, 0, 1, high_open=True)
