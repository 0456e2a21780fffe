"""Task squad's ``task.head`` (kwargs of BidafSelfAttention): each key's type (Hydra checks it at composition,
elmo_bench.engine.config_schema), range (checked before a run reads anything, elmo_bench.engine.config_check)
and CPU-sized default, written here only (tasks/squad/conf/task/squad.yaml sets no head value; head=paper and budget=cpu
override). Torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass, field

from elmo_bench.base.ranges import ranged
from elmo_bench.data.data_options import IDENTITY
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task squad, its defaults the CPU-sized head (a list's range holds for each item)."""

    hidden_dim: int | None = ranged(45, int, 1)               # paper: GRUs of 90 (CPU-sized here)
    linear_dim: int | None = ranged(90, int, 1)               # paper: linear layers of 180
    # paper: (variational) dropout 0.2 before GRUs and linear layers
    dropout: float | None = ranged(0.2, float, 0, 1, high_open=True)
    use_chars: bool | None = True                             # char CNN over the bilm-tf char ids
    char_dim: int | None = ranged(20, int, 1)
    char_filters: int | None = ranged(100, int, 1)
    char_width: int | None = ranged(5, int, 1)
    max_span_length: int | None = ranged(17, int, 1)          # decoding (SquadTask): paper's spans of <= 17 tokens



@dataclass(frozen=True)
class DataOptions:
    """``data`` keys of task squad's reader beyond the common ones (tasks/squad/task.py), defaults written here only
    (conf/config.yaml merges them under every squad dataset; a dataset file overrides)."""

    # an answer whose text is not the context at its answer_start is refused (refuse), or kept for the metric and
    # counted as unalignable (count: auditing a file; tasks/squad/reader.py). Never another number: a run refuses
    # or it gives the same one, so run identity leaves the key out
    answer_offsets: str = field(default="refuse", metadata={IDENTITY: False})


#: task squad as the registry (elmo_bench.tasks.registry) finds it; numbers: the ELMo paper (Peters et al. 2018)
TASK = TaskDeclaration(
    "squad",
    ".task:SquadTask",
    HeadConfig,
    data=DataOptions,
    paper={"table1": {"metric": "F1", "baseline": 81.1, "elmo": 85.8,
                       "previous_sota": ("Liu et al. (2017)", 84.4)},
           "table2": {"baseline": 80.8, "last_only": 84.7, "lambda_1": 85.0, "lambda_0.001": 85.2},
           "table3": {"input": 85.1, "both": 85.6, "output": 84.8},
           "table7": {"data": "SQuAD (context)", "before": 99.1, "after": 43.5, "row": 2}},
    paper_row=0,
    tables=('table1', 'table2', 'table3'),
    dataset_sizes={"squad": {
        # SQuAD v1.1 (Rajpurkar et al. 2016; the hub's `squad`): train 87,599 questions (442 articles), validation
        # 10,570. conf/data/squad.yaml carves dev = 20 training articles (~20/442 of the questions) and tests on
        # the official dev set.
        "train": 87_599 - round(87_599 * 20 / 442), "dev": round(87_599 * 20 / 442), "test": 10_570,
        "source": "SQuAD v1.1 (Rajpurkar et al. 2016): train 87,599 / dev 10,570 questions; dev here = 20 of the "
                  "442 training articles (~4.5%, estimated by question share)"}},
)
