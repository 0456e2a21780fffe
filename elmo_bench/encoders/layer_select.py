"""``encoder.layers``: which of a model's hidden states an encoder keeps (torch-free: settings, ``plan`` and ``embed``
read it before any model is loaded).

A model of L blocks has L+1 layers: index 0 is the embedding output, index L the final hidden state (after the
model's final norm, as ``output_hidden_states`` gives it). ``encoder.layers`` is either null (every layer: today's
behaviour, identity and cache key unchanged), a list of indices kept in the order given (``[0, 8, 16]``), or the
string ``every:K`` (0, K, 2K, ... and always the last). A list naming every layer in order is the same as null, so
it keys the same cache entries. A probe or mix over a subset names a layer by its index in the model; the indices
are recorded as ``encoder_layer_indices``.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from elmo_bench.base.errors import ConfigError

_EVERY = re.compile(r"^every:(\d+)$")


def _plain_list(value: Any) -> list[Any] | None:
    """``value`` as a plain list when it is one (a Hydra ListConfig, a tuple, or ``"0,2"`` as typed on a command
    line); None for anything else."""
    if isinstance(value, str):
        parts = [p.strip() for p in value.strip().strip("[]").split(",")]
        if not all(re.fullmatch(r"-?\d+", p) for p in parts):
            return None
        return [int(p) for p in parts]
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ListConfig":
        return list(value)
    return None


def check_layer_spec(value: Any, key: str = "encoder.layers") -> None:
    """ConfigError (one line) for a malformed ``encoder.layers``: empty list, not integers, negative, duplicates,
    or ``every:K`` with K < 1. Indices beyond the model are checked by :func:`layer_indices` once it is known."""
    if value is None:
        return
    if isinstance(value, str) and value.strip().startswith("every"):
        match = _EVERY.match(value.strip())
        if match is None or int(match.group(1)) < 1:
            raise ConfigError(f"config: {key} expected every:K with K >= 1, found {value!r}")
        return
    items = _plain_list(value)
    if items is None:
        raise ConfigError(f"config: {key} expected a list of layer indices such as [0,4,8], every:K or null "
                          f"(all layers), found {value!r}")
    if not items:
        raise ConfigError(f"config: {key} is an empty list; expected at least one layer index, or null for all")
    bad = [v for v in items if isinstance(v, bool) or not isinstance(v, int) or v < 0]
    if bad:
        raise ConfigError(f"config: {key} expected layer indices (integers >= 0, 0 = the embedding output), "
                          f"found {bad[0]!r}")
    repeated = sorted({v for v in items if items.count(v) > 1})
    if repeated:
        raise ConfigError(f"config: {key} names layer {repeated[0]} more than once ({list(items)}); each layer "
                          f"once")


def layer_indices(value: Any, num_layers: int, key: str = "encoder.layers",
                  model: str = "the model") -> tuple[int, ...] | None:
    """The model's layer indices ``value`` asks for, in the order asked; None for every layer (null, or a list
    naming all ``num_layers`` in order). ConfigError for an index outside the model."""
    check_layer_spec(value, key)
    if value is None:
        return None
    if isinstance(value, str) and value.strip().startswith("every"):
        step = int(_EVERY.match(value.strip()).group(1))
        chosen = list(range(0, num_layers, step))
        if chosen[-1] != num_layers - 1:
            chosen.append(num_layers - 1)
    else:
        chosen = [int(v) for v in _plain_list(value) or []]
        outside = [v for v in chosen if v >= num_layers]
        if outside:
            raise ConfigError(f"config: {key} names layer {outside[0]}, outside {model} (layers 0..{num_layers - 1}: "
                              f"0 = the embedding output, {num_layers - 1} = the last block's output)")
    return None if chosen == list(range(num_layers)) else tuple(chosen)


def all_or(indices: Sequence[int] | None, num_layers: int) -> list[int]:
    """The kept indices as a list: ``indices``, or every layer when None."""
    return list(range(num_layers)) if indices is None else list(indices)
