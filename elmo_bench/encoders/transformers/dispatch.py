"""A model spread over several devices (``encoder.device_map``, elmo_bench.encoders.transformers.placement): the
checks made before any weight is read, the ``from_pretrained`` keywords that make transformers dispatch it through
Hugging Face accelerate, and where a dispatched model takes its inputs.

Before loading: every device the map or ``max_memory`` names exists here (a GPU index below the count torch sees,
``mps`` where it is available), accelerate is installed, and ``max_memory`` (without ``offload_folder``) holds at
least the weights: the parameters the config describes (counted on torch's meta device: no memory, no weight
read) times the bytes of ``encoder.dtype``. Each is one ConfigError line.
"""
from __future__ import annotations

import importlib.util
from typing import Any, Mapping

import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.transformers.meta import meta_model

#: bytes a weight in each ``encoder.dtype``
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def _present(device: int | str) -> bool:
    if device in ("cpu", "disk"):
        return True
    if device == "mps":
        return bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()
    return isinstance(device, int) and device < torch.cuda.device_count()


def _here() -> str:
    count = torch.cuda.device_count()
    return f"{count} GPU{'s' if count != 1 else ''} (0..{count - 1}) and cpu" if count else "no GPU, only cpu"


def check_devices(place: Mapping[str, Any]) -> None:
    """Every device named by the map or ``max_memory`` exists here, and accelerate is importable: one line each."""
    mapped = place["device_map"]
    for where, named in (("device_map", mapped.values() if isinstance(mapped, dict) else ()),
                         ("max_memory", place["max_memory"] or {})):
        for device in named:
            if not _present(device):
                raise ConfigError(f"config: encoder.{where} names device {device!r}, which does not exist here "
                                  f"({_here()})")
    if isinstance(mapped, dict) and "disk" in mapped.values() and not place["offload_folder"]:
        raise ConfigError("config: encoder.device_map puts modules on disk; set encoder.offload_folder=DIR (where "
                          "their weights are kept)")
    if importlib.util.find_spec("accelerate") is None:
        raise ConfigError("config: encoder.device_map needs Hugging Face accelerate, which is not installed: pip "
                          "install 'elmo_bench[multi-device]' (or pip install accelerate)")


def parameter_count(architecture: Any) -> int:
    """Parameters of the model ``config`` describes (the encoder's part of an encoder-decoder)."""
    return sum(p.numel() for p in meta_model(architecture).parameters())


def check_room(place: Mapping[str, Any], architecture: Any, dtype: str, model: str) -> None:
    """``max_memory`` holds the weights when nothing may go to disk (no ``offload_folder``): one line naming the
    shortfall, from the config's parameter count x the dtype's bytes, before any weight is read."""
    budget = place["max_memory"]
    if not budget or place["offload_folder"]:
        return
    params = parameter_count(architecture)
    need, have = params * DTYPE_BYTES[dtype], sum(budget.values())
    if need > have:
        raise ConfigError(f"config: encoder.max_memory holds {_size(have)} in all, {model}'s weights need "
                          f"{_size(need)} ({params:,} parameters x {DTYPE_BYTES[dtype]} bytes in {dtype}): "
                          f"short by {_size(need - have)}; raise max_memory, add a device, or set "
                          f"encoder.offload_folder=DIR to keep the rest on disk")


def _size(count: int) -> str:
    """Bytes in the largest decimal unit below them (a tiny model's shortfall is not 0.00 GB)."""
    for unit, step in (("GB", 10 ** 9), ("MB", 10 ** 6), ("KB", 10 ** 3)):
        if count >= step:
            return f"{count / step:.2f} {unit}"
    return f"{count} bytes"


def load_keywords(place: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``from_pretrained`` keywords of a placement (nothing without one)."""
    if place is None:
        return {}
    out: dict[str, Any] = {"device_map": place["device_map"]}
    if place["max_memory"]:
        out["max_memory"] = dict(place["max_memory"])
    if place["offload_folder"]:
        out["offload_folder"] = str(place["offload_folder"])
    return out


def is_dispatched(model: Any) -> bool:
    """True for a model transformers dispatched over devices (it then carries ``hf_device_map``)."""
    return isinstance(getattr(model, "hf_device_map", None), dict)


def main_device(model: Any) -> torch.device:
    """Where a model takes its inputs: a dispatched one's first accelerator of its map (accelerate's main device,
    where its outputs come back and offloaded blocks run), else the cpu; an ordinary one's parameters' device."""
    if not is_dispatched(model):
        return next(model.parameters()).device
    for device in model.hf_device_map.values():
        if device not in ("cpu", "disk"):
            return torch.device(f"cuda:{device}" if isinstance(device, int) else device)
    return torch.device("cpu")


def dispatch_like(model: Any, like: Any, folder: str | None) -> Any:
    """``model`` (built whole on the cpu) spread as ``like`` is: the same device map, disk-offloaded weights under
    ``folder`` (a random twin next to its trained model keeps its own files)."""
    from accelerate import dispatch_model  # lazy: accelerate

    placed = dict(like.hf_device_map)
    dispatch_model(model, device_map=placed, offload_dir=folder)
    model.hf_device_map = placed
    return model
