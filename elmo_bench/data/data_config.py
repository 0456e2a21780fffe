"""The ``data`` group's common keys: those every data option (``tasks/<task>/conf/data/<name>.yaml``)
sets, and the run-wide ones no dataset file sets (:attr:`DataConfig.RUN_WIDE`, whose defaults here are the only
place their values are written:
conf/config.yaml merges them over every dataset, ``data_defaults@data``). Their types (Hydra checks them at
composition, elmo_bench.engine.config_schema) and ranges (checked before a run reads anything,
elmo_bench.engine.config_check) are stated here. Each dataset's other keys (hub_config, hub_splits, format, ...) are
its reader's business."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

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
    # true: allow two splits of identical content (the test file as training data, a test file that is a copy of
    # dev), refused by default (elmo_bench.data.split_checks); for a deliberate sanity check, not reported numbers
    allow_identical_splits: bool = False
    # the largest share (0..1) of dev or test examples also in train (or of test in dev) a run accepts; above it
    # the run is refused naming both files and the share (elmo_bench.data.split_checks; results.json
    # data.split_overlap)
    max_overlap: float = ranged(0.25, float, 0, 1)

    #: the keys no dataset file sets: every run's, with the defaults above (conf/config.yaml's data_defaults)
    RUN_WIDE: ClassVar[tuple[str, ...]] = ("allow_identical_splits", "max_overlap")
