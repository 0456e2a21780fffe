"""The keys of conf/task/edge_ner.yaml's ``head:`` block (kwargs of elmo_bench.modules.edge_head.EdgeHead): their
types (checked at composition) and ranges (checked before a run reads anything); torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task edge_ner, in the order of conf/task/edge_ner.yaml."""

    proj_dim: int | None = ranged(None, int, 1)
    hidden_dim: int | None = ranged(None, int, 1)
    dropout: float | None = ranged(None, float, 0, 1, high_open=True)


#: task edge_ner as the registry (elmo_bench.tasks.registry) finds it: an edge-probing task (Tenney et al. 2019), in
#: the report's edge-probing table only (elmo_bench.report.edge_report), never in the ELMo paper's tables
TASK = TaskDeclaration("edge_ner", ".task:EdgeNerTask", HeadConfig, tables=("edge_probing",))
