"""The ConfigStore nodes config_schema generates from the dataclasses (issue 35): each one's keys in field order, its
values the dataclass's defaults (int stays int, float float), each node typed as its field's hint says, and a wrong
type refused when it is merged, which is how it fails at composition. The flat groups (runtime, the trainer's epoch
scaling, the run-wide data keys, each head, the embedder and logger groups) accept null everywhere; the pretrain
group (nested ``model``, lists of pairs, path lists) and bilm=adapted's recipe accept null only where the field's
type says ``| None``.

The expectations are derived here from the dataclasses, independently of the generator; they held for the two
generators before they became one (defaults_node and nested_defaults_node, checked on the commit before that)."""
from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any

import pytest
import yaml
from omegaconf import BooleanNode, DictConfig, FloatNode, IntegerNode, ListConfig, OmegaConf, StringNode
from omegaconf.errors import ValidationError

from elmo_bench.base.plain import optional_parts
from elmo_bench.base.ranges import default_of
from elmo_bench.data.data_config import DataConfig
from elmo_bench.engine import config_schema
from elmo_bench.engine.head_configs import head_config
from elmo_bench.engine.run_config import Embedder, Logger, Runtime
from elmo_bench.engine.trainer_config import EpochScaling, TrainerConfig
from elmo_bench.pretrain.adapted_recipe import AdaptedRecipe
from elmo_bench.pretrain.pretrain_config import PretrainConfig, PretrainModel
from elmo_bench.tasks.registry import registered

NODE_OF = {int: IntegerNode, float: FloatNode, bool: BooleanNode, str: StringNode}
WRONG = {int: "abc", float: "abc", bool: "maybe"}
HEADS = sorted(task for task in registered() if head_config(task) is not None)


def _plain(value: Any) -> Any:
    return [_plain(item) for item in value] if isinstance(value, (list, tuple)) else value


def _fields(cls: type, skip: tuple[str, ...] = ()) -> list[dataclasses.Field]:
    return [spec for spec in dataclasses.fields(cls) if spec.name not in skip]


def _expected_values(cls: type, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The defaults in field order (none: null; a nested dataclass: its own defaults; tuples as lists)."""
    out = {}
    for spec in _fields(cls, skip):
        kind, _ = optional_parts(typing.get_type_hints(cls)[spec.name])
        value = default_of(spec)
        out[spec.name] = _expected_values(kind) if dataclasses.is_dataclass(kind) else \
            None if value is dataclasses.MISSING else _plain(value)
    return out


def _trainer_expected() -> dict[str, Any]:
    """TrainerConfig's keys null (null: the task's own value), without ``progress``; then EpochScaling's defaults."""
    return {**{spec.name: None for spec in _fields(TrainerConfig, ("progress",))}, **_expected_values(EpochScaling)}


def _preset_only(cls: type) -> tuple[str, ...]:
    return tuple(getattr(cls, "PRESET_ONLY", ()))


def _run_wide_skip() -> tuple[str, ...]:
    return tuple(spec.name for spec in dataclasses.fields(DataConfig) if spec.name not in DataConfig.RUN_WIDE)


#: name → (the node, the dataclass, fields left out, every key nullable, the expected values)
NODES: dict[str, tuple] = {
    "runtime_schema": (config_schema.runtime_schema, Runtime, (), True, lambda: _expected_values(Runtime)),
    "embedder_schema": (config_schema.embedder_schema, Embedder, (), True, lambda: _expected_values(Embedder)),
    "logger_schema": (config_schema.logger_schema, Logger, (), True, lambda: _expected_values(Logger)),
    "data_defaults": (config_schema.data_defaults, DataConfig, _run_wide_skip(), True,
                      lambda: _expected_values(DataConfig, _run_wide_skip())),
    "pretrain_schema": (config_schema.pretrain_schema, PretrainConfig, (), False,
                        lambda: _expected_values(PretrainConfig)),
    "recipe_schema": (config_schema.recipe_schema, AdaptedRecipe, (), False, lambda: _expected_values(AdaptedRecipe)),
    **{f"head_schema/{task}": (lambda task=task: config_schema.head_schema(head_config(task)), head_config(task),
                               _preset_only(head_config(task)), True,
                               lambda task=task: _expected_values(head_config(task), _preset_only(head_config(task))))
       for task in HEADS},
}


@pytest.mark.parametrize("name", [*NODES, "trainer_schema"])
def test_each_node_holds_its_dataclass_defaults_in_field_order(name):
    """Compared as JSON text (key order, int vs float), from the node and from its YAML form."""
    if name == "trainer_schema":
        node, expected = config_schema.trainer_schema(), _trainer_expected()
    else:
        make, _, _, _, expected_of = NODES[name]
        node, expected = make(), expected_of()
    assert json.dumps(OmegaConf.to_container(node)) == json.dumps(expected)
    assert json.dumps(yaml.safe_load(OmegaConf.to_yaml(node))) == json.dumps(expected)


def _check_types(node: DictConfig, cls: type, skip: tuple[str, ...], nullable: bool, where: str) -> int:
    """Each field's node: its class, whether it takes null, a list's item type; returns how many were checked."""
    hints = typing.get_type_hints(cls)
    checked = 0
    for spec in _fields(cls, skip):
        kind, optional = optional_parts(hints[spec.name])
        child = node._get_node(spec.name)
        key = f"{where}.{spec.name}"
        if dataclasses.is_dataclass(kind):
            assert isinstance(child, DictConfig), key
            checked += _check_types(child, kind, (), nullable, key)
            continue
        if typing.get_origin(kind) in (list, tuple):
            assert isinstance(child, ListConfig), key
            item = typing.get_args(kind)[0]
            if spec.metadata.get("path"):  # one path or several: an untyped list, null allowed
                assert child._metadata.element_type is typing.Any and child._metadata.optional, key
                checked += 1
                continue
            if typing.get_origin(item) is tuple:  # a list of pairs: each a list of ints
                assert child._metadata.element_type == typing.List[typing.get_args(item)[0]], key
            else:
                assert child._metadata.element_type is item, key
        else:
            assert type(child) is NODE_OF[kind], key
        assert child._metadata.optional is (nullable or optional), key
        checked += 1
    return checked


@pytest.mark.parametrize("name", [*NODES, "trainer_schema"])
def test_each_node_is_typed_as_its_fields(name):
    if name == "trainer_schema":
        node = config_schema.trainer_schema()
        assert _check_types(node, TrainerConfig, ("progress",), True, "trainer") == 15
        assert _check_types(node, EpochScaling, (), True, "trainer") == 2
        return
    make, cls, skip, nullable, _ = NODES[name]
    assert _check_types(make(), cls, skip, nullable, name) == len(_fields(cls, skip)) + (
        len(dataclasses.fields(PretrainModel)) - 1 if cls is PretrainConfig else 0)


def _leaves(node: DictConfig, prefix: str = "") -> list[tuple[str, Any]]:
    out = []
    for key in node:
        child = node._get_node(key)
        if isinstance(child, DictConfig):
            out += _leaves(child, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", child))
    return out


@pytest.mark.parametrize("name", [*NODES, "trainer_schema"])
def test_a_wrong_type_is_refused_when_merged(name):
    """Every int, float and bool key refuses a word, every typed list a word (and an item that is a word), and a
    key whose type has no ``| None`` refuses null: what Hydra does with an override or a YAML value."""
    node = config_schema.trainer_schema() if name == "trainer_schema" else NODES[name][0]()
    refused = 0
    for key, child in _leaves(node):
        wrong = [WRONG[kind] for kind, cls in NODE_OF.items() if type(child) is cls and kind in WRONG]
        if isinstance(child, ListConfig) and child._metadata.element_type is not typing.Any:
            wrong = ["abc", ["abc"]]
        if not child._metadata.optional:
            wrong.append(None)
        for value in wrong:
            with pytest.raises(ValidationError):
                OmegaConf.merge(node, _nested(key, value))
            refused += 1
    assert refused or all(type(child) is StringNode for _, child in _leaves(node))  # a str takes any word


def _nested(key: str, value: Any) -> dict[str, Any]:
    """``a.b`` = v → ``{"a": {"b": v}}``."""
    head, _, rest = key.partition(".")
    return {head: _nested(rest, value) if rest else value}


@pytest.mark.parametrize("overrides, key", [
    (["threads=abc"], "threads"),
    (["data.max_overlap=abc"], "data.max_overlap"),
    (["trainer.scale_epochs=maybe"], "trainer.scale_epochs"),
    (["task=sst", "task.head.output_dims=[1,x]"], "task.head.output_dims"),
    (["task=coref", "task.head.spans_per_word=abc"], "task.head.spans_per_word"),
])
def test_a_wrong_type_fails_at_composition(overrides, key):
    from hydra.errors import ConfigCompositionException

    from tests.config_snapshot import composed

    with pytest.raises(ConfigCompositionException, match=key.replace(".", r"\.")):
        composed(overrides)


@pytest.mark.parametrize("override", ["pretrain.model.n_layers=abc", "pretrain.min_count=null",
                                      "pretrain.model.filters=[[1,x]]", "pretrain.lr=abc"])
def test_a_wrong_pretrain_type_fails_at_composition(override):
    from hydra.errors import ConfigCompositionException

    from elmo_bench.commands.pretrain import compose_pretrain

    with pytest.raises(ConfigCompositionException, match=override.split("=")[0].replace(".", r"\.")):
        compose_pretrain([override])
