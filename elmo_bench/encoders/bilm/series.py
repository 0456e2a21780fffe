"""The biLM's checkpoints (issue 57 item 3): a probe run's directory names the weights file by its content when
``bilm.weights`` or ``bilm.options`` is not the group's own (so each checkpoint of a series gets its own directory,
a series point's named by its folder, step and tokens seen, while the shipped, fixture and random biLMs keep their
names), and a sweep's checkpoints are compared by their architecture before any job starts
(elmo_bench.commands.checkpoint_series)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.paths import CONF_DIR
from elmo_bench.encoders.checkpoints import POINT_FILE
from elmo_bench.encoders.model_files import file_hash

NAME = "bilm"
#: the file keys of the ``bilm`` group: a value other than its option's own names a checkpoint by content
FILE_KEYS = ("options", "weights")
#: a label keeps this many characters of the weights file's name (as a path's label in a run directory's name)
MAX_LABEL_NAME = 40


def _group_files(root: Mapping[str, Any], name: str) -> dict[str, str] | None:
    """The options and weights paths that group option ``bilm=<name>`` names itself, resolved against the run's
    ``paths`` (None: an option with no files of its own, ``bilm=custom``, or one outside conf/bilm)."""
    from omegaconf import OmegaConf  # lazy: omegaconf

    source = CONF_DIR / NAME / f"{name}.yaml"
    if not source.is_file():
        return None
    node = OmegaConf.load(source)
    if "defaults" in node:
        del node["defaults"]
    both = OmegaConf.create({"paths": root.get("paths") or {}, NAME: node})
    try:
        return {key: str(both[NAME][key]) for key in FILE_KEYS}
    except Exception:  # noqa: BLE001 - a ??? (bilm=custom) or an unresolvable default: no files of its own
        return None


def _same(one: str, other: str) -> bool:
    return Path(one).expanduser().resolve() == Path(other).expanduser().resolve()


def checkpoint(root: Mapping[str, Any]) -> str | None:
    """The biLM's weights file: what a checkpoint of a series is (None without one)."""
    files = root.get(NAME) or {}
    weights = files.get("weights")
    return str(weights) if weights else None


def checkpoint_label(root: Mapping[str, Any]) -> str | None:
    """``<weights file name>~<10 hex of its sha256>`` when the run's options or weights are not its group option's
    own (a missing file: the hash of its path, as the door refuses it), else None (the name stays the group's)."""
    files = root.get(NAME) or {}
    name, weights = str(files.get("name") or NAME), checkpoint(root)
    if weights is None:
        return None
    own = _group_files(root, name)
    if own is not None and all(_same(str(files.get(key) or ""), own[key]) for key in FILE_KEYS):
        return None
    path = Path(weights).expanduser()
    digest = file_hash(path) if path.is_file() else hashlib.sha256(weights.encode("utf-8")).hexdigest()
    # a series point's weights are all called weights.hdf5: the point's folder (its step and tokens) names it, so
    # identical weights under two steps get two directories, and two records the report can mark as duplicates
    name = path.parent.name if (path.parent / POINT_FILE).is_file() else path.name
    return f"{name[:MAX_LABEL_NAME]}~{digest[:10]}"


def _flat(prefix: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flat(f"{prefix}.{key}", item).items()}
    return {prefix: value}


def architecture(root: Mapping[str, Any]) -> dict[str, Any]:
    """What checkpoints of one series must share: every options value (widths, layers, characters) and the shape
    of every array of the weights file (its softmax: the vocabulary); a file that is missing adds nothing (the
    door says so)."""
    files = root.get(NAME) or {}
    out: dict[str, Any] = {}
    options = Path(str(files.get("options") or "")).expanduser()
    if options.is_file():
        out.update(_flat("options", json.loads(options.read_text(encoding="utf-8"))))
    weights = Path(str(checkpoint(root) or "")).expanduser()
    if weights.is_file():
        import h5py  # lazy: h5py

        with h5py.File(weights, "r") as handle:
            handle.visititems(lambda key, item: out.__setitem__(f"weights {key} shape", tuple(item.shape))
                              if hasattr(item, "shape") else None)
    return out
