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
from elmo_bench.encoders.kinds import encoder_kinds, kind_problem
from elmo_bench.encoders.layer_select import check_layer_spec

#: the kinds this package ships; :func:`known_kinds` adds any module that declares ``ENCODER_KIND``
KINDS = ("bilm", "hdf5", "manylangs", "python", "transformers")
#: kinds whose ``encoder.path`` is required (a directory, a file or a hub name)
NEEDS_PATH = ("transformers", "hdf5", "manylangs")
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
#: what ``encoder.random_init`` can draw anew, by kind (elmo_bench.encoders.random_init; the biLM's is bilm=random)
RANDOM_INIT = {"transformers": ("all",)}
#: what ``bilm.random_init`` (bilm=random) can draw: every weight, or the LSTMs under the trained token layer
BILM_RANDOM_INIT = ("all", "lstm")


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
    """Range-check an ``encoder`` group (a plain mapping): kind (required: a run's comes from conf/encoder/, or
    engine.run_config.EncoderPart for a config without the group), path where needed, batch_size >= 1, max_length
    >= 1 or null, pooling, amp, dtype and cache_dtype in their sets, layers well formed, max_tokens >= 1 or null.
    Keys a kind does not use are checked when present."""
    kind = spec.get("kind")
    if isinstance(kind, str) and kind_problem(kind):  # a broken kind skipped by the scan: its own line
        raise ConfigError(f"config: {prefix}.kind {kind!r}: {kind_problem(kind)}")
    _choice(f"{prefix}.kind", kind, known_kinds())
    if kind in NEEDS_PATH and missing(spec.get("path")):
        what = "a model directory or a hub name" if kind == "transformers" else (
            "the file elmo-bench embed --layers all writes" if kind == "hdf5" else "a model directory")
        raise ConfigError(f"config: encoder={kind} needs {prefix}.path ({what}); found none")
    if kind == "python" and missing(spec.get("_target_")):
        raise ConfigError(f"config: encoder=python needs {prefix}._target_=pkg.module.Class; found none")
    check_kind_keys(spec, prefix)
    erase_spec(spec, prefix)  # encoder.erase.* (off unless erase.concept is set)
    if kind == "python":
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
    if spec.get("kind") in ("transformers", "python"):  # python: every other key is its class's argument
        return
    given = [key for key in ("layers", "dtype", "max_tokens") if spec.get(key) not in (None, DEFAULT_DTYPE)]
    if given:
        raise ConfigError(f"config: {prefix}.{given[0]} applies to encoder=transformers only (found "
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
    """ConfigError (one line) when the encoder's ``path`` names something that is not there: a transformers path
    that looks like a path (:func:`path_like`) but is no directory, an hdf5 file that is no file, a manylangs
    directory that is no directory. Hub names are left to the hub (``plan`` calls this: it prices, never loads)."""
    kind, path = spec.get("kind"), spec.get("path")
    if kind not in NEEDS_PATH or missing(path):
        return
    found = Path(str(path)).expanduser()
    if kind == "transformers" and path_like(str(path)) and not found.is_dir():
        raise ConfigError(f"encoder=transformers: encoder.path {path}: "
                          f"{'is a file' if found.exists() else 'no such directory'} (expected a model directory in "
                          f"the save_pretrained layout, or a hub name such as bert-base-cased)")
    if kind == "hdf5" and not found.is_file():
        raise ConfigError(f"encoder=hdf5: encoder.path {path}: no such file (expected the output of elmo-bench embed "
                          f"--layers all)")
    if kind == "manylangs" and not found.is_dir():
        raise ConfigError(f"encoder=manylangs: encoder.path {path}: no such directory (expected an "
                          f"ELMoForManyLangs model directory)")


def check_random_init(spec: Mapping[str, Any], prefix: str = "encoder") -> None:
    """``encoder.random_init`` (a random-weights baseline of the same architecture) where the kind can draw one,
    checked at the door rather than when the encoder is built; ``encoder.random_seed`` an integer >= 0 or null."""
    kind, mode = spec.get("kind"), spec.get("random_init")
    if mode is not None and mode not in RANDOM_INIT.get(str(kind), ()):
        can = "; ".join(f"encoder={k}: {'|'.join(modes)}" for k, modes in RANDOM_INIT.items())
        raise ConfigError(f"config: {prefix}.random_init={mode!r} is not available for encoder={kind} ({can}; the "
                          f"biLM: bilm=random bilm.random_init=all|lstm)")
    if "random_seed" in spec:
        check_number(f"{prefix}.random_seed", spec["random_seed"], int, low=0, optional=True)
