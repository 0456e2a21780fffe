"""Task snli's ``task.head`` (kwargs of Esim): each key's type (Hydra checks it at composition,
elmo_bench.engine.config_schema), range (checked before a run reads anything, elmo_bench.engine.config_check)
and CPU-sized default, written here only (this folder's conf/task/snli.yaml sets none; head=paper and budget=cpu
override). Torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task snli, its defaults the CPU-sized head (a list's range holds for each item)."""

    hidden_dim: int | None = ranged(100, int, 1)              # paper/ESIM: 300 (CPU-sized here)
    projection_dim: int | None = ranged(100, int, 1)          # paper/ESIM: 300
    mlp_dim: int | None = ranged(100, int, 1)                 # paper/ESIM: 300
    dropout: float | None = ranged(0.5, float, 0, 1, high_open=True)  # ESIM: 0.5


#: task snli as the registry (elmo_bench.tasks.registry) finds it; numbers: the ELMo paper (Peters et al. 2018)
TASK = TaskDeclaration(
    "snli",
    ".task:SnliTask",
    HeadConfig,
    paper={"table1": {"metric": "accuracy", "baseline": 88.0, "elmo": 88.7, "elmo_std": "0.17",
                       "previous_sota": ("Chen et al. (2017)", 88.6)},
           "table2": {"baseline": 88.1, "last_only": 89.1, "lambda_1": 89.3, "lambda_0.001": 89.5},
           "table3": {"input": 88.9, "both": 89.5, "output": 88.7},
           "table7": {"data": "SNLI", "before": 72.1, "after": 16.8, "row": 0}},
    paper_row=1,
    tables=('table1', 'table2', 'table3'),
    dataset_sizes={"snli": {
        # SNLI 1.0 (Bowman et al. 2015; the hub's `snli`): 550,152 / 10,000 / 10,000 pairs, of which 785 / 158 /
        # 176 have no gold label and are dropped by the reader.
        "train": 549_367, "dev": 9_842, "test": 9_824,
        "source": "SNLI 1.0 (Bowman et al. 2015): 550,152 / 10,000 / 10,000 pairs less 785 / 158 / 176 "
                  "without a gold label"}},
)
