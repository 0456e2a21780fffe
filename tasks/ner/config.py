"""The keys of conf/task/ner.yaml's ``head:`` block: their types (Hydra checks them at composition,
elmo_bench.engine.config_schema) and ranges (checked before a run reads anything, elmo_bench.engine.config_check).
The values live in the YAML only (kwargs of NerHead); torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task ner, in the order of conf/task/ner.yaml (a list's range holds for each item)."""

    char_dim: int | None = ranged(None, int, 1)
    char_filters: int | None = ranged(None, int, 1)
    char_width: int | None = ranged(None, int, 1)
    lstm_hidden: list[int] | None = ranged(None, int, 1)
    dropout: float | None = ranged(None, float, 0, 1, high_open=True)
    constrain_decoding: bool | None = None


#: task ner as the registry (elmo_bench.tasks.registry) finds it; numbers: the ELMo paper (Peters et al. 2018)
TASK = TaskDeclaration(
    "ner",
    ".task:NerTask",
    HeadConfig,
    paper={"table1": {"metric": "F1", "baseline": 90.15, "elmo": 92.22, "elmo_std": "0.10",
                       "previous_sota": ("Peters et al. (2017)", 91.93), "previous_sota_std": "0.19"},
           "table7": {"data": "CoNLL-2003", "before": 103.2, "after": 46.3, "row": 1}},
    paper_row=4,
)
