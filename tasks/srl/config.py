"""Task srl's ``task.head`` (kwargs of SrlHead): each key's type (Hydra checks it at composition,
elmo_bench.engine.config_schema), range (checked before a run reads anything, elmo_bench.engine.config_check)
and CPU-sized default, written here only (this folder's conf/task/srl.yaml sets none; head=paper and budget=cpu
override). Torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.data.srl_conll import SrlFiles
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task srl, its defaults the CPU-sized head (a list's range holds for each item)."""

    hidden: int | None = ranged(100, int, 1)                  # paper (He et al. 2017): 300
    layers: int | None = ranged(4, int, 0)                    # paper: 8 (alternating directions, highway connections)
    predicate_dim: int | None = ranged(100, int, 1)           # paper: 100 (predicate-indicator embedding)
    # paper: 0.1 (variational, on the recurrent state)
    recurrent_dropout: float | None = ranged(0.1, float, 0, 1, high_open=True)



@dataclass(frozen=True)
class DataOptions(SrlFiles):
    """``data`` keys of task srl's reader beyond the common ones: the SRL files' (format, words_glob, props_glob),
    their defaults written once, in elmo_bench.data.srl_conll.SrlFiles (conf/config.yaml merges them under every
    srl dataset; a dataset file overrides)."""


#: task srl as the registry (elmo_bench.tasks.registry) finds it; numbers: the ELMo paper (Peters et al. 2018)
TASK = TaskDeclaration(
    "srl",
    ".task:SrlTask",
    HeadConfig,
    data=DataOptions,
    paper={"table1": {"metric": "F1", "baseline": 81.4, "elmo": 84.6,
                       "previous_sota": ("He et al. (2017)", 81.7)},
           "table2": {"baseline": 81.6, "last_only": 84.1, "lambda_1": 84.6, "lambda_0.001": 84.8},
           "table3": {"input": 84.7, "both": 84.3, "output": 80.9}},
    paper_row=2,
    tables=('table1', 'table2', 'table3'),
)
