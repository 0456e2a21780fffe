"""Task pos's ``task.head`` (kwargs of LinearTagger): each key's type (Hydra checks it at composition,
elmo_bench.engine.config_schema), range (checked before a run reads anything, elmo_bench.engine.config_check)
and CPU-sized default, written here only (this folder's conf/task/pos.yaml sets none; head=paper and budget=cpu
override). Torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task pos, its defaults the CPU-sized head (a list's range holds for each item)."""

    bias: bool | None = True



@dataclass(frozen=True)
class DataOptions:
    """``data`` keys of task pos's reader beyond the common ones (tasks/pos/reader.py), defaults written here only
    (conf/config.yaml merges them under every pos dataset; a dataset file overrides)."""

    format: str = "conllu"          # conllu (Universal Dependencies) | conll2000 (word POS chunk, Brill tags)
    tag_column: str = "xpos"        # conllu: xpos (Penn Treebank tags) | upos
    tag_source: str = "gold"        # gold | brill: what the log says of the tags (conll2000's are Brill's)


#: task pos as the registry (elmo_bench.tasks.registry) finds it; numbers: the ELMo paper (Peters et al. 2018)
TASK = TaskDeclaration(
    "pos",
    ".task:PosTask",
    HeadConfig,
    data=DataOptions,
    tables=('table6',),
)
