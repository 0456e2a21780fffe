"""Task ner's ``task.head`` (kwargs of NerHead): each key's type (Hydra checks it at composition,
elmo_bench.engine.config_schema), range (checked before a run reads anything, elmo_bench.engine.config_check)
and CPU-sized default, written here only (this folder's conf/task/ner.yaml sets none; head=paper and budget=cpu
override). Torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task ner, its defaults the CPU-sized head (a list's range holds for each item)."""

    char_dim: int | None = ranged(16, int, 1)                 # paper: 16
    char_filters: int | None = ranged(128, int, 1)            # paper: 128 filters, width 3
    char_width: int | None = ranged(3, int, 1)
    lstm_hidden: list[int] | None = ranged([100, 100], int, 1)  # paper: [200, 100] (CPU-sized here)
    dropout: float | None = ranged(0.5, float, 0, 1, high_open=True)
    constrain_decoding: bool | None = True                    # paper: "ensuring that the output tag sequence is valid"


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
