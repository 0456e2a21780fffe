"""The keys every ``conf/data/<dataset>.yaml`` sets: their types (Hydra checks them at composition,
elmo_bench.engine.config_schema) and ranges (checked before a run reads anything, elmo_bench.engine.config_check).
Each dataset's other keys (hub_config, hub_splits, format, ...) are its reader's business."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged


@dataclass(frozen=True)
class DataConfig:
    """The ``data`` group's common keys (values: the YAML files; a null split: none)."""

    name: str | None = None                 # recorded in results.json
    source: str | None = None               # local | hub | disk
    hub_name: str | None = None             # datasets.load_dataset name for source=hub
    train: str | None = None
    dev: str | None = None
    test: str | None = None
    fraction: float = ranged(1.0, float, 0, 1, low_open=True)  # training fraction, nested by seed
