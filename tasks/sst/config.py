"""The keys of conf/task/sst.yaml's ``head:`` block: their types (Hydra checks them at composition,
elmo_bench.engine.config_schema) and ranges (checked before a run reads anything, elmo_bench.engine.config_check).
The values live in the YAML only (kwargs of BCN); torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task sst, in the order of conf/task/sst.yaml (a list's range holds for each item)."""

    pre_encode_dim: int | None = ranged(None, int, 1)
    encoder_hidden: int | None = ranged(None, int, 1)
    integrator_hidden: int | None = ranged(None, int, 1)
    output_dims: list[int] | None = ranged(None, int, 1)
    embedding_dropout: float | None = ranged(None, float, 0, 1, high_open=True)
    pre_encode_dropout: float | None = ranged(None, float, 0, 1, high_open=True)
    integrator_dropout: float | None = ranged(None, float, 0, 1, high_open=True)
    output_dropout: float | None = ranged(None, float, 0, 1, high_open=True)


#: task sst as the registry (elmo_bench.tasks.registry) finds it; numbers: the ELMo paper (Peters et al. 2018)
TASK = TaskDeclaration(
    "sst",
    ".task:SstTask",
    HeadConfig,
    paper={"table1": {"metric": "accuracy", "baseline": 51.4, "elmo": 54.7, "elmo_std": "0.5",
                       "previous_sota": ("McCann et al. (2017)", 53.7)},
           "table7": {"data": "SST", "before": 131.5, "after": 78.6, "row": 3}},
    paper_row=5,
)
