"""Every edge-probing task's ``task.head`` (kwargs of elmo_bench.modules.edge_head.EdgeHead, jiant v1's
edges-tmpl): each key's type (checked at composition), range (checked before a run reads anything) and default,
written here only (the edge tasks' YAML sets no head value). One dataclass for the six tasks, whose heads are the
same; torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged


@dataclass(frozen=True)
class EdgeHeadConfig:
    """``task.head`` of an edge task, its defaults jiant's."""

    proj_dim: int | None = ranged(256, int, 1)                # each span role's projection
    hidden_dim: int | None = ranged(256, int, 1)              # the MLP's hidden layer
    dropout: float | None = ranged(0.3, float, 0, 1, high_open=True)
