"""Load one split of a Hugging Face dataset: by hub name (``data.source=hub``) or from a ``save_to_disk`` copy
(``data.source=disk data.path=DIR``, for clusters without internet). Failures become one-line DataErrors that
name the dataset and the way out, instead of a page of ``datasets`` traceback.

Data-config keys read here: ``hub_name``, ``hub_config`` (e.g. ``english_v4``, ``en_ewt``), ``hub_revision``
(e.g. ``refs/convert/parquet`` for hub datasets that only ship a loading script, which ``datasets`` >= 4 no
longer runs) and ``path`` (the ``save_to_disk`` directory).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.errors import DataError


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")


def describe(data_cfg: Mapping[str, Any]) -> str:
    """``name`` or ``name/config``, as the user would type it."""
    name, config = data_cfg.get("hub_name"), data_cfg.get("hub_config")
    return f"{name}/{config}" if config else str(name)


def load_hub_split(data_cfg: Mapping[str, Any], split: str) -> Any:
    """``datasets.load_dataset(hub_name, hub_config, split=split, revision=hub_revision)``."""
    import datasets  # deferred: heavy, and only the hub path needs it

    name = data_cfg.get("hub_name")
    if not name:
        raise DataError("data config: source=hub but hub_name is not set (e.g. data.hub_name=conll2003)")
    try:
        return datasets.load_dataset(str(name), data_cfg.get("hub_config") or None, split=split,
                                     revision=data_cfg.get("hub_revision") or None)
    except Exception as err:  # offline, unknown name/config/split, script-only repository, ...
        raise DataError(
            f"hub dataset {describe(data_cfg)!r} split {split!r} could not be loaded ({_first_line(err)}); "
            f"without internet, save it where there is some (datasets.load_dataset({str(name)!r}"
            f"{', ' + repr(data_cfg.get('hub_config')) if data_cfg.get('hub_config') else ''}).save_to_disk(DIR)) "
            f"and run with data.source=disk data.path=DIR") from err


def load_disk_split(data_cfg: Mapping[str, Any], split: str) -> Any:
    """Split ``split`` of the ``DatasetDict`` that ``datasets.save_to_disk`` wrote to ``data.path``."""
    import datasets  # deferred: heavy, and only this path needs it

    path = data_cfg.get("path")
    if not path:
        raise DataError("data config: source=disk but path is not set (data.path=DIR, a save_to_disk directory)")
    if not Path(path).is_dir():
        raise DataError(f"{path}: directory not found (expected a datasets save_to_disk copy of "
                        f"{describe(data_cfg)!r}, given by data.path)")
    try:
        saved = datasets.load_from_disk(str(path))
    except Exception as err:
        raise DataError(f"{path}: not a datasets save_to_disk directory ({_first_line(err)})") from err
    if isinstance(saved, datasets.DatasetDict):
        if split not in saved:
            raise DataError(f"{path}: no split {split!r} in this save_to_disk copy (it has {', '.join(saved)}); "
                            f"set data.hub_splits to the names it uses")
        return saved[split]
    raise DataError(f"{path}: holds a single Dataset, not a DatasetDict with splits; save the whole "
                    f"load_dataset({describe(data_cfg)!r}) result (a DatasetDict) instead")


def load_split(data_cfg: Mapping[str, Any], split: str) -> Any:
    """One ``datasets.Dataset`` split from the hub or from disk, as ``data.source`` says."""
    source = data_cfg.get("source")
    if source == "hub":
        return load_hub_split(data_cfg, split)
    if source == "disk":
        return load_disk_split(data_cfg, split)
    raise DataError(f"data config: source={source!r} does not load Hugging Face datasets; expected hub or disk")
