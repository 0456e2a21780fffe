"""``elmo-bench score TASK FILES...``: each task's metric module scores official files on its own."""
from __future__ import annotations

import importlib
from typing import Sequence

from elmo_bench.base.errors import ConfigError

#: task → (module with ``score_files(*paths)``, number of files it takes)
SCORERS: dict[str, tuple[str, int]] = {
    "ner": ("elmo_bench.tasks.ner.metric", 1),
    "squad": ("elmo_bench.tasks.squad.metric", 2),
    "snli": ("elmo_bench.tasks.snli.metric", 2),
    "sst": ("elmo_bench.tasks.sst.metric", 2),
    "srl": ("elmo_bench.tasks.srl.metric", 2),
    "coref": ("elmo_bench.tasks.coref.metric", 2),
    "wsd": ("elmo_bench.probe.wsd_metric", 2),
}


def score(task: str, files: Sequence[str]) -> dict:
    module, count = SCORERS[task]
    if len(files) != count:
        raise ConfigError(f"elmo-bench score {task}: expected {count} file(s), found {len(files)}")
    return importlib.import_module(module).score_files(*files)
