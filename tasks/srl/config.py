"""The keys of conf/task/srl.yaml's ``head:`` block: their types (Hydra checks them at composition,
elmo_bench.engine.config_schema) and ranges (checked before a run reads anything, elmo_bench.engine.config_check).
The values live in the YAML only (kwargs of SrlHead); torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task srl, in the order of conf/task/srl.yaml (a list's range holds for each item)."""

    hidden: int | None = ranged(None, int, 1)
    layers: int | None = ranged(None, int, 0)
    predicate_dim: int | None = ranged(None, int, 1)
    recurrent_dropout: float | None = ranged(None, float, 0, 1, high_open=True)


#: task srl as the registry (elmo_bench.tasks.registry) finds it; numbers: the ELMo paper (Peters et al. 2018)
TASK = TaskDeclaration(
    "srl",
    ".task:SrlTask",
    HeadConfig,
    paper={"table1": {"metric": "F1", "baseline": 81.4, "elmo": 84.6,
                       "previous_sota": ("He et al. (2017)", 81.7)},
           "table2": {"baseline": 81.6, "last_only": 84.1, "lambda_1": 84.6, "lambda_0.001": 84.8},
           "table3": {"input": 84.7, "both": 84.3, "output": 80.9}},
    paper_row=2,
    tables=('table1', 'table2', 'table3'),
)
