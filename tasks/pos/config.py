"""The keys of conf/task/pos.yaml's ``head:`` block: their types (Hydra checks them at composition,
elmo_bench.engine.config_schema) and ranges (checked before a run reads anything, elmo_bench.engine.config_check).
The values live in the YAML only (kwargs of LinearTagger); torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task pos, in the order of conf/task/pos.yaml (a list's range holds for each item)."""

    bias: bool | None = None


#: task pos as the registry (elmo_bench.tasks.registry) finds it; numbers: the ELMo paper (Peters et al. 2018)
TASK = TaskDeclaration(
    "pos",
    ".task:PosTask",
    HeadConfig,
    tables=('table6',),
)
