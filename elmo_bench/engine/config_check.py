"""Validation at the door: every numeric option of a run is range-checked before any data is read (the checks the
parts of elmo_bench.engine.run_config.RunConfig make when they are built; ``elmo-bench pretrain``'s are made by
elmo_bench.pretrain.pretrain_config.PretrainConfig, with the same one-line messages).

Unknown keys: Hydra's ``+key=value`` adds a key the config does not have, and nothing reads it, so a typo
(``+trainer.max_epoch=3``) would change nothing yet be recorded as if it had; :func:`check_added_keys` refuses it,
naming the closest known key (``+group=option``, adding a config group, stays allowed). ``++key=value`` likewise,
when the config composed without it lacks the key (engine.config_door passes that config).

A wrong value (``trainer.batch_size=0``, ``trainer.max_epochs=-3``, ``seed=abc``, ``trainer.lr=abc``,
``data.fraction=2``, ``trainer.rho=1.5``, ``device=gpu``, ``amp=fp8``) is one ConfigError line naming the key, what
was expected and what was found. (Whether the device exists is checked next, by elmo_bench.base.device.resolve_device.)
"""
from __future__ import annotations

import difflib
from dataclasses import fields
from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import check_number as _number
from elmo_bench.base.ranges import check_ranges
from elmo_bench.engine.trainer_config import OPTIMIZERS, TrainerConfig


def check_trainer(trainer: Mapping[str, Any], prefix: str = "trainer") -> None:
    """The merged trainer settings (task defaults overridden by the trainer group), against the ranges that
    elmo_bench.engine.loop.TrainerConfig states."""

    check_ranges(TrainerConfig, trainer, prefix)
    if trainer.get("optimizer") not in OPTIMIZERS:
        raise ConfigError(f"config: {prefix}.optimizer expected one of {list(OPTIMIZERS)}, "
                          f"found {trainer.get('optimizer')!r}")
    if trainer.get("lr_plateau_factor") is not None and trainer.get("lr_plateau_patience") is None:
        raise ConfigError(f"config: {prefix}.lr_plateau_patience expected an integer >= 0 when "
                          f"{prefix}.lr_plateau_factor is set, found None")
    check_min_lr(trainer, prefix)


def check_min_lr(trainer: Mapping[str, Any], prefix: str = "trainer") -> None:
    """A plateau schedule whose minimum rate is above the starting one ends training before the first epoch (the
    untrained head would be reported as the run's score), so it is refused (ranges are checked before)."""
    lr, min_lr = trainer.get("lr"), trainer.get("lr_plateau_min_lr")
    if trainer.get("lr_plateau_factor") is None or lr is None or min_lr is None or not min_lr > lr:
        return
    raise ConfigError(f"config: {prefix}.lr_plateau_min_lr={min_lr!r} is above {prefix}.lr={lr!r}: training would "
                      f"stop before its first epoch (lower {prefix}.lr_plateau_min_lr or raise {prefix}.lr)")


def check_head(head: Mapping[str, Any], cls: type | None = None) -> None:
    """Every numeric value of ``task.head``: against the ranges its task's HeadConfig states (``cls``,
    tasks/<name>/config.py; a list's range holds for each item), else, for a task without one, by what it is: a
    dropout in [0, 1); a size (an integer or a list of integers: dims, hidden sizes, widths, counts) >= 1, a layer
    count >= 0; any other number > 0. Booleans and strings are the head's business."""
    if cls is not None:
        for spec in fields(cls):
            rule = spec.metadata.get("range")
            if rule is None or spec.name not in head:
                continue
            value, name = head[spec.name], f"task.head.{spec.name}"
            if isinstance(value, (list, tuple)):
                for index, item in enumerate(value):
                    rule.check(f"{name}[{index}]", item)
            else:
                rule.check(name, value)
        return
    for key, value in head.items():
        name = f"task.head.{key}"
        if "dropout" in key:
            _number(name, value, float, 0, 1, high_open=True)
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for index, item in enumerate(values):
            where = name if values is not value else f"{name}[{index}]"
            if isinstance(item, bool) or not isinstance(item, (int, float)):
                continue
            if isinstance(item, int):
                _number(where, item, int, 0 if key.endswith("layers") else 1)
            else:
                _number(where, item, float, 0, low_open=True)


def added_keys(overrides: Sequence[str], conf_dir: Path, base: Mapping[str, Any] | None = None) -> list[str]:
    """The keys that ``+key=value`` overrides add (``+group=option`` adds a config group of ``conf_dir``: not a
    key). ``++key=value``, Hydra's add-or-override, adds its key only when ``base`` (the config composed without
    the ``++`` overrides) lacks it; without ``base`` it is left alone."""
    keys = []
    for text in overrides:
        forced = text.startswith("++")
        if not text.startswith("+") or "=" not in text or (forced and base is None):
            continue
        key = text.lstrip("+").split("=", 1)[0].split("@", 1)[0].strip()
        if not key or (conf_dir / key.replace(".", "/")).is_dir():
            continue
        if forced and _has_key(base, key.split(".")):
            continue
        keys.append(key)
    return keys


def _has_key(config: Any, parts: Sequence[str]) -> bool:
    for part in parts:
        if not isinstance(config, Mapping) or part not in config:
            return False
        config = config[part]
    return True


def check_added_keys(overrides: Sequence[str], config: Mapping[str, Any], conf_dir: Path,
                     base: Mapping[str, Any] | None = None) -> None:
    """ConfigError for a ``+key=value`` override whose key the config does not know: the first part of its path
    that is new, under a node that has other (known) keys, with the closest known key suggested (difflib). A key
    added under a node with ``_target_`` (``encoder=python``) is an argument of that class, so it is read."""
    added = [key.split(".") for key in added_keys(overrides, conf_dir, base)]
    for parts in added:
        for level in range(len(parts) - 1, -1, -1):
            node: Any = config
            for part in parts[:level]:
                node = node.get(part) if isinstance(node, Mapping) else None
            if not isinstance(node, Mapping):
                continue
            if "_target_" in node:  # hydra.utils.instantiate passes every key of such a node to its class
                break
            new_here = {other[level] for other in added if len(other) > level and other[:level] == parts[:level]}
            known = sorted(str(k) for k in node if k not in new_here)
            if known or level == 0:
                prefix = ".".join(parts[:level])
                unknown = ".".join(parts[:level + 1])
                close = difflib.get_close_matches(parts[level], known, n=1)
                hint = f"did you mean {prefix + '.' if prefix else ''}{close[0]}?" if close else \
                    f"known keys of {prefix or 'the config'}: {', '.join(known[:12])}{' ...' if len(known) > 12 else ''}"
                sign = "++" if any(o.startswith(f"++{'.'.join(parts)}=") for o in overrides) else "+"
                raise ConfigError(f"config: unknown key {unknown} (from {sign}{'.'.join(parts)}): {hint} (a key "
                                  f"added with '{sign}' is read by nothing)")
