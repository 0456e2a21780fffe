"""Typed config groups: the ``trainer`` and ``mix`` groups' keys and types, registered in Hydra's ConfigStore as
the option ``schema`` of each group, which every option's defaults list puts first (``conf/trainer/default.yaml``,
``conf/mix/*.yaml``). A wrong type (``trainer.batch_size=abc``, ``mix.dropout=high``) then fails at composition,
one line (elmo_bench.commands.guard). The YAML files hold the values, the dataclasses the types and ranges
(elmo_bench.engine.trainer_config.TrainerConfig, elmo_bench.records.elmo_settings.ElmoSettings): each written once.

Every key is nullable (null: the task's own value). A schema holds exactly the keys its YAML files set, in their
order, so the resolved config (run identity, results.json) is what it was before the schemas.
"""
from __future__ import annotations

import types
import typing
from typing import Any, Mapping

from omegaconf import BooleanNode, DictConfig, FloatNode, IntegerNode, OmegaConf, StringNode

from elmo_bench.engine.trainer_config import TrainerConfig
from elmo_bench.records.elmo_settings import CONFIG_KEY, ElmoSettings

_NODES = {bool: BooleanNode, int: IntegerNode, float: FloatNode, str: StringNode}
#: the keys the ``trainer`` group has beyond a task's trainer settings (sample-efficiency sweeps)
TRAINER_EXTRA: dict[str, type] = {"scale_epochs": bool, "max_scaled_epochs": int}
#: the ``mix`` group's keys in the order of conf/mix/*.yaml (``name`` names the option)
MIX_KEYS = ("name", "mode", "layer", "placement", "lambda", "layer_norm", "gamma_init", "dropout")


def _plain(hint: Any) -> type:
    """``float | None`` → float."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return next(arg for arg in typing.get_args(hint) if arg is not type(None))
    return hint


def typed_node(kinds: Mapping[str, type]) -> DictConfig:
    """A config of nullable typed values, all null: key → its type."""
    return OmegaConf.create({key: _NODES[kind](None, is_optional=True) for key, kind in kinds.items()})


def trainer_schema() -> DictConfig:
    """The ``trainer`` group: TrainerConfig's fields (without ``progress``, a top-level key) + TRAINER_EXTRA."""
    hints = typing.get_type_hints(TrainerConfig)
    kinds = {name: _plain(hint) for name, hint in hints.items() if name != "progress"}
    return typed_node({**kinds, **TRAINER_EXTRA})


def mix_schema() -> DictConfig:
    """The ``mix`` group: ElmoSettings' fields under their config keys (``lambda``, ``layer``) + ``name``."""
    hints = {CONFIG_KEY.get(name, name): _plain(hint) for name, hint in typing.get_type_hints(ElmoSettings).items()}
    return typed_node({key: hints.get(key, str) for key in MIX_KEYS})


def register_schemas() -> None:
    """``trainer/schema`` and ``mix/schema`` in Hydra's ConfigStore (idempotent)."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    store.store(group="trainer", name="schema", node=trainer_schema())
    store.store(group="mix", name="schema", node=mix_schema())
