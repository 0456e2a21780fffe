"""The ranges of the ``encoder`` settings, in one torch-free place: ``run.py`` (at composition and when the encoder
is built), ``plan``, the probes and ``embed`` all call :func:`check_encoder_settings`, so ``encoder.batch_size=-3``
(which once ran no batch and cached zeros as every layer) is the same one line everywhere.

Each check raises :class:`~elmo_bench.base.errors.ConfigError` naming the key, what it allows and what was found.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import check_number
from elmo_bench.encoders.erase_settings import check_erasable, erase_spec
from elmo_bench.encoders.kinds import encoder_kinds, kind_problem, title
from elmo_bench.encoders.layer_select import check_layer_spec

#: ``auto`` (the default): ``last`` for a causal model, ``first`` otherwise (decided by the model's behaviour)
POOLINGS = ("auto", "first", "last", "mean")
#: ``encoder.dtype``: the weights' dtype (float32, the default, keeps today's identities)
DTYPES = ("float32", "bfloat16", "float16")
DEFAULT_DTYPE = "float32"
AMPS = ("off", "bf16", "fp16")
#: how the activation cache stores layers: fp16 (the default: the old entries and keys) or fp32 (for encoders whose
#: layers exceed fp16's range, +-65504)
CACHE_DTYPES = ("fp16", "fp32")
DEFAULT_CACHE_DTYPE = "fp16"
#: the keys only a kind that declares ``model_keys`` reads (a large model's layer subset, weights' dtype, tokens a
#: pass, and its placement over several devices)
MODEL_KEYS = ("layers", "dtype", "max_tokens", "device_map", "max_memory", "offload_folder")


def known_kinds() -> tuple[str, ...]:
    """Every declared encoder kind (elmo_bench.encoders.kinds scans the package when first asked, so importing this
    module stays torch-free)."""
    return tuple(encoder_kinds())


def missing(value: Any) -> bool:
    """True for an unset value: absent, empty, or OmegaConf's mandatory ``???``."""
    return value is None or (isinstance(value, str) and value.strip() in ("", "???"))


def _choice(key: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"config: {key} expected one of {', '.join(allowed)}, found {value!r}")


def cache_dtype(spec: Mapping[str, Any] | None) -> str:
    """``encoder.cache_dtype`` of a spec (fp16 when absent), checked."""
    value = (spec or {}).get("cache_dtype", DEFAULT_CACHE_DTYPE)
    value = DEFAULT_CACHE_DTYPE if value is None else value
    _choice("encoder.cache_dtype", value, CACHE_DTYPES)
    return str(value)


def check_encoder_settings(spec: Mapping[str, Any], prefix: str = "encoder") -> None:
    """Range-check an ``encoder`` group (a plain mapping): kind (required: a run's comes from its option, or
    engine.run_config.EncoderPart for a config without the group), path where needed, batch_size >= 1, max_length
    >= 1 or null, pooling, amp, dtype and cache_dtype in their sets, layers well formed, max_tokens >= 1 or null.
    Keys a kind does not use are checked when present."""
    kind = spec.get("kind")
    if isinstance(kind, str) and kind_problem(kind):  # a broken kind skipped by the scan: its own line
        raise ConfigError(f"config: {prefix}.kind {kind!r}: {kind_problem(kind)}")
    _choice(f"{prefix}.kind", kind, known_kinds())
    declared = encoder_kinds()[str(kind)]
    if declared.path is not None and missing(spec.get("path")):
        raise ConfigError(f"config: encoder={kind} needs {prefix}.path ({declared.path}); found none")
    if declared.check is not None:
        declared.check(spec, prefix)
    check_kind_keys(spec, prefix)
    erase_spec(spec, prefix)  # encoder.erase.* (off unless erase.concept is set)
    if declared.free_keys:
        return  # the other keys are the user's class's arguments
    if "batch_size" in spec:
        check_number(f"{prefix}.batch_size", spec["batch_size"], int, low=1)
    if "max_length" in spec:
        check_number(f"{prefix}.max_length", spec["max_length"], int, low=1, optional=True)
    if "pooling" in spec:
        _choice(f"{prefix}.pooling", spec["pooling"], POOLINGS)
    _check_large_model_keys(spec, prefix)
    if "amp" in spec and spec["amp"] not in (None, False):
        _choice(f"{prefix}.amp", spec["amp"], AMPS)
    check_random_init(spec, prefix)
    if "revision" in spec and spec["revision"] is not None and not isinstance(spec["revision"], str):
        raise ConfigError(f"config: {prefix}.revision expected a branch, tag or commit (a string) or null, "
                          f"found {spec['revision']!r}")
    cache_dtype(spec)


def check_kind_keys(spec: Mapping[str, Any], prefix: str = "encoder") -> None:
    """A key only another encoder kind reads, set on this one (``+encoder.layers`` on the biLM, ``encoder.erase.*``
    on hdf5): one line naming the kinds that read it, rather than ignored. The door asks this before it refuses the
    keys it does not know, and the report of Hydra's struct error asks it too (elmo_bench.commands.guard), so such a
    key gets this line, not "unknown key" or "not in struct"."""
    check_erasable(spec, prefix)
    declared = encoder_kinds().get(str(spec.get("kind")))
    if declared is not None and (declared.model_keys or declared.free_keys):  # free: every key is its class's
        return
    given = [key for key in MODEL_KEYS if spec.get(key) not in (None, DEFAULT_DTYPE)]
    if given:
        readers = "|".join(name for name, k in encoder_kinds().items() if k.model_keys)
        raise ConfigError(f"config: {prefix}.{given[0]} applies to encoder={readers} only (found "
                          f"encoder={spec.get('kind')}); remove it")


def _check_large_model_keys(spec: Mapping[str, Any], prefix: str) -> None:
    """``layers`` (elmo_bench.encoders.layer_select), ``dtype`` and ``max_tokens`` (>= 1 or null), when present
    (on another kind than transformers: check_kind_keys)."""
    if "layers" in spec:
        check_layer_spec(spec["layers"], f"{prefix}.layers")
    if "dtype" in spec and spec["dtype"] is not None:
        _choice(f"{prefix}.dtype", spec["dtype"], DTYPES)
    if "max_tokens" in spec:
        check_number(f"{prefix}.max_tokens", spec["max_tokens"], int, low=1, optional=True)


_HUB_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def path_like(name: str) -> bool:
    """True when ``encoder.path`` can only be meant as a local path: it exists, starts with ``/``, ``.`` or ``~``,
    has more than one ``/`` or a backslash, has a part a hub name cannot have, or its first part is a local
    directory. A hub name is ``name`` or ``org/name``."""
    if os.path.lexists(name) or name.startswith(("/", ".", "~")) or "\\" in name or name.count("/") > 1:
        return True
    parts = name.split("/")
    return not all(_HUB_PART.match(part) for part in parts) or (len(parts) == 2 and Path(parts[0]).is_dir())


def check_encoder_path(spec: Mapping[str, Any]) -> None:
    """ConfigError (one line) when the encoder's ``path`` names something that is not there, as its kind's
    ``check_path`` reads it (a transformer's path that looks like a path but is no directory, an hdf5 file that is
    no file, ...). Hub names are left to the hub (``plan`` calls this: it prices, never loads)."""
    kind = encoder_kinds().get(str(spec.get("kind")))
    if kind is None or kind.path is None or kind.check_path is None or missing(spec.get("path")):
        return
    kind.check_path(spec)


def check_random_init(spec: Mapping[str, Any], prefix: str = "encoder") -> None:
    """``encoder.random_init`` (a random-weights baseline of the same architecture) where the kind can draw one,
    checked at the door rather than when the encoder is built; ``encoder.random_seed`` an integer >= 0 or null."""
    kind, mode = spec.get("kind"), spec.get("random_init")
    declared = encoder_kinds().get(str(kind))
    allowed = declared.random_modes if declared is not None and declared.random_via is None else ()
    if mode is not None and mode not in allowed:
        raise ConfigError(f"config: {prefix}.random_init={mode!r} is not available for encoder={kind} "
                          f"({_random_twins()})")
    if "random_seed" in spec:
        check_number(f"{prefix}.random_seed", spec["random_seed"], int, low=0, optional=True)


def _random_twins() -> str:
    """Where each kind's random twin is asked for: ``encoder=<kind>: modes`` through ``encoder.random_init``, then
    the kinds that ask elsewhere (the biLM: its own group)."""
    kinds = [k for k in encoder_kinds().values() if k.random_modes]
    here = [f"encoder={k.name}: {'|'.join(k.random_modes)}" for k in kinds if k.random_via is None]
    return "; ".join(here + [f"{title(k)}: {k.random_via}" for k in kinds if k.random_via is not None])

