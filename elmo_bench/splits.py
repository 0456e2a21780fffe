"""The train/dev/test loop every reader shares: local files by path, or a hub dataset by name."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from elmo_bench.errors import DataError

#: our split names → the usual Hugging Face split names
HUB_SPLITS = {"train": "train", "dev": "validation", "test": "test"}


def read_splits(data_cfg: Mapping[str, Any], read_local: Callable[[str, str], list],
                read_hub: Callable[[str, str], list]) -> dict[str, list]:
    """Every split of train/dev/test that ``data_cfg`` names.

    ``source: local`` calls ``read_local(path, split)`` for each split whose path is set; ``source: hub`` calls
    ``read_hub(hub_split, split)``, where a missing key means the hub's usual split name and null means absent.
    """
    source = data_cfg.get("source", "local")
    if source not in ("local", "hub"):
        raise DataError(f"data config: source must be 'local' or 'hub', got {source!r}")
    out: dict[str, list] = {}
    for name in ("train", "dev", "test"):
        if source == "hub":
            split = data_cfg.get(name, HUB_SPLITS[name])
            if split:
                out[name] = read_hub(split, name)
        elif data_cfg.get(name):
            out[name] = read_local(data_cfg[name], name)
    return out
