"""Where each split comes from (a local file, a hub split, a ``save_to_disk`` split) and the loop readers share."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from elmo_bench.base.errors import DataError
from elmo_bench.data.hub import load_split

#: ``data.source`` values: local files by path, ``datasets.load_dataset`` by hub name, ``datasets.load_from_disk``
SOURCES: tuple[str, ...] = ("local", "hub", "disk")
#: our split names → the usual Hugging Face split names (override per dataset with ``data.hub_splits``)
HUB_SPLITS = {"train": "train", "dev": "validation", "test": "test"}


def source_of(data_cfg: Mapping[str, Any]) -> str:
    """``data.source`` checked against SOURCES (default ``local``)."""
    source = data_cfg.get("source") or "local"
    if source not in SOURCES:
        raise DataError(f"data config: source must be one of {', '.join(SOURCES)}, got {source!r}")
    return str(source)


def split_location(data_cfg: Mapping[str, Any], name: str) -> str | None:
    """Where split ``name`` (train/dev/test) lives, or None when the config leaves it out.

    ``source: local`` → the path in ``data_cfg[name]``. ``source: hub | disk`` → the Hugging Face split name in
    ``data_cfg.hub_splits[name]`` (a missing key means the usual name, null means absent), so one data config
    carries both the local paths and the hub split names and ``data.source=...`` alone switches between them.
    """
    if source_of(data_cfg) == "local":
        value = data_cfg.get(name)
    else:
        hub_splits = data_cfg.get("hub_splits") or {}
        value = hub_splits[name] if name in hub_splits else HUB_SPLITS.get(name)
    return str(value) if value not in (None, "", False) else None


def read_split(data_cfg: Mapping[str, Any], name: str, read_local: Callable[[str, str], list],
               read_records: Callable[[Any, str], list]) -> list:
    """Split ``name`` of ``data_cfg``; DataError when the config does not name it.

    ``source: local`` calls ``read_local(path, name)``; ``source: hub | disk`` loads the split with
    ``elmo_bench.data.hub.load_split`` and calls ``read_records(dataset, name)`` on the ``datasets.Dataset``.
    """
    where = split_location(data_cfg, name)
    if where is None:
        raise DataError(f"data config: no {name} split (set data.{name}, or data.hub_splits.{name} for the hub)")
    if source_of(data_cfg) == "local":
        return read_local(where, name)
    return read_records(load_split(data_cfg, where), name)


def read_splits(data_cfg: Mapping[str, Any], read_local: Callable[[str, str], list],
                read_records: Callable[[Any, str], list]) -> dict[str, list]:
    """Every split of train/dev/test that ``data_cfg`` names (each read as ``read_split`` does)."""
    return {name: read_split(data_cfg, name, read_local, read_records)
            for name in ("train", "dev", "test") if split_location(data_cfg, name) is not None}
