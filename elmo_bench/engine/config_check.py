"""Validation at the door: every numeric option of a run is range-checked before any data is read.

A wrong value (``trainer.batch_size=0``, ``trainer.max_epochs=-3``, ``seed=abc``, ``trainer.lr=abc``,
``data.fraction=2``, ``trainer.rho=1.5``, ``device=gpu``, ``amp=fp8``) is one ConfigError line naming the key, what
was expected and what was found. (Whether the device exists is checked next, by elmo_bench.base.device.resolve_device.)
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError

OPTIMIZERS = ("adam", "adadelta", "sgd")


def _number(key: str, value: Any, kind: type, low: float | None = None, high: float | None = None,
            low_open: bool = False, high_open: bool = False, optional: bool = False) -> Any:
    """``value`` as ``kind`` (int or float) within the bounds, else ConfigError naming ``key``."""
    if value is None and optional:
        return None
    bounds = []
    if low is not None:
        bounds.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        bounds.append(f"{'<' if high_open else '<='} {high:g}")
    expected = f"{'an integer' if kind is int else 'a number'}{' ' + ' and '.join(bounds) if bounds else ''}"
    if optional:
        expected += " or null"
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and kind is int and isinstance(value, float):
        ok = value.is_integer()
    if ok:
        number = kind(value)
        ok = math.isfinite(number) and not (
            (low is not None and (number < low or (low_open and number == low)))
            or (high is not None and (number > high or (high_open and number == high))))
    if not ok:
        raise ConfigError(f"config: {key} expected {expected}, found {value!r}")
    return number


def check_trainer(trainer: Mapping[str, Any], prefix: str = "trainer") -> None:
    """The merged trainer settings (task defaults overridden by the trainer group)."""
    _number(f"{prefix}.batch_size", trainer.get("batch_size"), int, 1)
    _number(f"{prefix}.eval_batch_size", trainer.get("eval_batch_size"), int, 1)
    _number(f"{prefix}.max_epochs", trainer.get("max_epochs"), int, 1)
    _number(f"{prefix}.patience", trainer.get("patience"), int, 0)
    _number(f"{prefix}.min_epochs", trainer.get("min_epochs"), int, 0, optional=True)
    _number(f"{prefix}.lr", trainer.get("lr"), float, 0, low_open=True)
    _number(f"{prefix}.grad_clip", trainer.get("grad_clip"), float, 0, low_open=True, optional=True)
    _number(f"{prefix}.weight_decay", trainer.get("weight_decay", 0.0), float, 0)
    _number(f"{prefix}.rho", trainer.get("rho"), float, 0, 1, optional=True)  # torch.optim.Adadelta: 0 <= rho <= 1
    _number(f"{prefix}.eps", trainer.get("eps"), float, 0, low_open=True, optional=True)
    if trainer.get("optimizer") not in OPTIMIZERS:
        raise ConfigError(f"config: {prefix}.optimizer expected one of {list(OPTIMIZERS)}, "
                          f"found {trainer.get('optimizer')!r}")


def check_run(cfg: Mapping[str, Any], trainer: Mapping[str, Any]) -> None:
    """A resolved run config (plain containers) and its merged trainer settings."""
    from elmo_bench.base.device import check_device_spec, normalise_amp
    from elmo_bench.modules.token_embedders import PLACEMENTS
    from elmo_bench.modules.elmo import MODES

    _number("seed", cfg.get("seed"), int, 0)
    check_device_spec(cfg.get("device", "auto"))
    normalise_amp(cfg.get("amp", "off"))
    _number("threads", cfg.get("threads", 1), int, 0)
    _number("max_segment", cfg.get("max_segment", 256), int, 1)
    if not isinstance(cfg.get("cache", True), bool):
        raise ConfigError(f"config: cache expected true or false, found {cfg.get('cache')!r}")
    _number("data.fraction", (cfg.get("data") or {}).get("fraction", 1.0), float, 0, 1, low_open=True)
    check_trainer(trainer)
    _number("trainer.max_scaled_epochs", (cfg.get("trainer") or {}).get("max_scaled_epochs") or 50, int, 1)
    mix = cfg.get("mix") or {}
    task_elmo = (cfg.get("task") or {}).get("elmo") or {}
    for key, low, high, high_open in (("dropout", 0, 1, True), ("lambda", 0, None, False)):
        for where, source in (("mix", mix), ("task.elmo", task_elmo)):
            _number(f"{where}.{key}", source.get(key), float, low, high, high_open=high_open, optional=True)
    _number("mix.gamma_init", mix.get("gamma_init"), float, optional=True)
    if mix.get("mode") not in MODES:
        raise ConfigError(f"config: mix.mode expected one of {list(MODES)}, found {mix.get('mode')!r}")
    if mix.get("mode") == "layer":
        _number("mix.layer", mix.get("layer"), int)
    placement = mix.get("placement") or task_elmo.get("placement", "input")
    if placement not in PLACEMENTS:
        raise ConfigError(f"config: mix.placement expected one of {list(PLACEMENTS)}, found {placement!r}")
    for key, value in ((cfg.get("task") or {}).get("head") or {}).items():
        if "dropout" in key:
            _number(f"task.head.{key}", value, float, 0, 1, high_open=True)
