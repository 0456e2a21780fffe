"""``encoder.device_map``, ``encoder.max_memory`` and ``encoder.offload_folder`` read and checked without torch (the
door, ``plan``): where a model too large for one device puts its blocks (Hugging Face accelerate dispatches them;
elmo_bench.encoders.transformers.dispatch). They decide placement only, never a number: the run identity and the
activation cache key leave them out (elmo_bench.identity.rules.HOW_COMPUTED).

- ``device_map``: null (the model on the run's device, as always) | ``auto`` | ``balanced`` | ``balanced_low_0`` |
  ``sequential`` (accelerate's strategies over the devices ``max_memory`` names, or every device it finds) | a map
  of module name → device, as a mapping or a JSON string (``{"embed_tokens": 0, "layers.0": 0, ..., "norm": 1}``).
- ``max_memory``: null | device → size, as a mapping or a JSON string (``{"0": "70GiB", "cpu": "100GiB"}``): a GPU's
  index, ``cpu`` or ``mps``; a size in bytes or with KB, MB, GB (10^3 steps) or KiB, MiB, GiB (2^10 steps).
- ``offload_folder``: null | a directory where weights beyond ``max_memory`` go (accelerate's disk offload).
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError

#: accelerate's placement strategies (transformers' ``from_pretrained(device_map=...)``)
STRATEGIES = ("auto", "balanced", "balanced_low_0", "sequential")
#: size units ``max_memory`` takes → bytes (accelerate's ``convert_file_size_to_int`` reads the same)
UNITS = {"KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]i?B)\s*$", re.IGNORECASE)
_CUDA = re.compile(r"^cuda(?::(\d+))?$")
#: the keys a placement is made of (all placement only)
KEYS = ("device_map", "max_memory", "offload_folder")


def _mapping(value: Any, key: str, example: str) -> dict[str, Any]:
    """A mapping given as one or as a JSON string of one; one ConfigError line otherwise."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = None
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(f"config: {key} expected {example}, found {value!r}")
    return {str(k): v for k, v in value.items()}


def device_of(value: Any, key: str) -> int | str:
    """One device of a map: a GPU index (``0``, ``"0"``, ``cuda:0``) as an int, or ``cpu``, ``disk``, ``mps``."""
    if isinstance(value, bool):
        value = None
    if isinstance(value, int) and value >= 0:
        return value
    text = str(value).strip() if value is not None else ""
    if text.isdigit():
        return int(text)
    found = _CUDA.match(text)
    if found:
        return int(found.group(1) or 0)
    if text in ("cpu", "disk", "mps"):
        return text
    raise ConfigError(f"config: {key} expected a device (a GPU index such as 0 or cuda:1, cpu, disk or mps), "
                      f"found {value!r}")


def device_map(spec: Mapping[str, Any], prefix: str = "encoder") -> str | dict[str, int | str] | None:
    """``encoder.device_map`` read: None, a strategy, or module name → device (each device checked)."""
    value = spec.get("device_map")
    if value is None:
        return None
    if isinstance(value, str) and value.strip() in STRATEGIES:
        return value.strip()
    example = f"one of {', '.join(STRATEGIES)} or a JSON map of module name to device"
    if isinstance(value, str) and not value.strip().startswith("{"):
        raise ConfigError(f"config: {prefix}.device_map expected {example}, found {value!r}")
    return {name: device_of(device, f"{prefix}.device_map[{name!r}]")
            for name, device in _mapping(value, f"{prefix}.device_map", example).items()}


def size_bytes(value: Any, key: str) -> int:
    """A memory size in bytes: an integer, or a number with KB/MB/GB/KiB/MiB/GiB (``80GB``, ``70.5GiB``)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    found = _SIZE.match(value) if isinstance(value, str) else None
    if found is None or found.group(2)[-1] != "B":  # "80Gb" is gigabits to accelerate: refused, not divided by 8
        raise ConfigError(f"config: {key} expected a size such as 80GB, 70GiB or a number of bytes, found {value!r}")
    return int(float(found.group(1)) * UNITS[found.group(2).upper()])


def max_memory(spec: Mapping[str, Any], prefix: str = "encoder") -> dict[int | str, int] | None:
    """``encoder.max_memory`` read: None, or device → bytes (GPU indices as ints, then ``mps``, ``cpu``)."""
    value = spec.get("max_memory")
    if value is None:
        return None
    given = _mapping(value, f"{prefix}.max_memory", 'a map of device to size such as {"0": "70GiB", "cpu": "100GiB"}')
    out: dict[int | str, int] = {}
    for name, size in given.items():
        device = device_of(name, f"{prefix}.max_memory key")
        if device == "disk":
            raise ConfigError(f"config: {prefix}.max_memory names disk; the disk takes what the devices cannot "
                              f"hold when {prefix}.offload_folder is set (remove the disk entry)")
        out[device] = size_bytes(size, f"{prefix}.max_memory[{name!r}]")
    return {k: out[k] for k in sorted(out, key=lambda d: (not isinstance(d, int), str(d)))}


def check(spec: Mapping[str, Any], prefix: str = "encoder") -> None:
    """The kind's settings check of the placement keys (one ConfigError line each): well-formed values, and
    ``max_memory`` only beside a strategy (a map of every module places them itself)."""
    placed, budget = device_map(spec, prefix), max_memory(spec, prefix)
    folder = spec.get("offload_folder")
    if folder is not None and (not isinstance(folder, str) or not folder.strip()):
        raise ConfigError(f"config: {prefix}.offload_folder expected a directory or null, found {folder!r}")
    if budget is not None and not isinstance(placed, str):
        raise ConfigError(f"config: {prefix}.max_memory applies with {prefix}.device_map={'|'.join(STRATEGIES)} "
                          f"(found device_map={spec.get('device_map')!r}); set a strategy or remove max_memory")
    if folder is not None and placed is None:
        raise ConfigError(f"config: {prefix}.offload_folder applies with {prefix}.device_map (found null); set "
                          f"{prefix}.device_map=auto or remove offload_folder")


def placement(spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """The placement a spec asks for (None: the model whole on the run's device): device_map, max_memory,
    offload_folder, checked."""
    check(spec)
    placed = device_map(spec)
    if placed is None:
        return None
    return {"device_map": placed, "max_memory": max_memory(spec), "offload_folder": spec.get("offload_folder")}
