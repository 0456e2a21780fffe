"""Task sst's ``task.head`` (kwargs of BCN): each key's type (Hydra checks it at composition,
elmo_bench.engine.config_schema), range (checked before a run reads anything, elmo_bench.engine.config_check)
and CPU-sized default, written here only (this folder's conf/task/sst.yaml sets none; head=paper and budget=cpu
override). Torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task sst, its defaults the CPU-sized head (a list's range holds for each item)."""

    pre_encode_dim: int | None = ranged(100, int, 1)          # paper: 300 (CPU-sized here)
    encoder_hidden: int | None = ranged(100, int, 1)          # paper: 300
    integrator_hidden: int | None = ranged(100, int, 1)       # paper: 300
    # two ReLU layers (paper: sizes not stated; McCann et al.'s maxout 1200, 600)
    output_dims: list[int] | None = ranged([200, 100], int, 1)
    embedding_dropout: float | None = ranged(0.5, float, 0, 1, high_open=True)
    pre_encode_dropout: float | None = ranged(0.25, float, 0, 1, high_open=True)
    integrator_dropout: float | None = ranged(0.1, float, 0, 1, high_open=True)
    output_dropout: float | None = ranged(0.2, float, 0, 1, high_open=True)



@dataclass(frozen=True)
class DataOptions:
    """``data`` keys of task sst's reader beyond the common ones (tasks/sst/reader.py), defaults written here only
    (conf/config.yaml merges them under every sst dataset; a dataset file overrides)."""

    # the training split's phrases added as examples: all | min4 (phrases of 4 or more tokens) | none (roots only)
    train_phrases: str = "min4"


#: task sst as the registry (elmo_bench.tasks.registry) finds it; numbers: the ELMo paper (Peters et al. 2018)
TASK = TaskDeclaration(
    "sst",
    ".task:SstTask",
    HeadConfig,
    data=DataOptions,
    paper={"table1": {"metric": "accuracy", "baseline": 51.4, "elmo": 54.7, "elmo_std": "0.5",
                       "previous_sota": ("McCann et al. (2017)", 53.7)},
           "table7": {"data": "SST", "before": 131.5, "after": 78.6, "row": 3}},
    paper_row=5,
)
