"""Typed config nodes made from the dataclasses, which hold every default once (issue 35): registered in Hydra's
ConfigStore, each taken first by the config it types, so a YAML file only overrides, and a wrong type
(``trainer.batch_size=abc``, ``mix.dropout=high``, ``threads=abc``) fails at composition, one line
(elmo_bench.commands.guard). Ranges live on the same dataclasses.

* ``runtime_schema`` (root): elmo_bench.engine.run_config.Runtime's fields and defaults (``seed``, ``cache``,
  ``max_segment``, ``threads``, ``device``, ``amp``, ``progress``), taken by conf/config.yaml's defaults list just
  before ``_self_`` (an experiment, after ``_self_``, still wins).
* ``trainer/schema``: TrainerConfig's fields, null (null: the task's own setting, elmo_bench.engine.trainer_config),
  and EpochScaling's with their defaults; conf/trainer/default.yaml takes it first.
* ``mix/schema``: ElmoSettings' fields under their config keys, null (each conf/mix option sets its values).
* ``embedder/schema``, ``logger/schema``: elmo_bench.engine.run_config.Embedder's and Logger's fields with their
  defaults; each conf/embedder option takes it first and sets its ``name``, ``glove`` and ``elmo``, each conf/logger
  option its ``mode``.
* ``bilm_schema/recipe``: bilm=adapted's recipe, elmo_bench.pretrain.adapted_recipe.AdaptedRecipe's fields and
  defaults; conf/bilm/adapted.yaml places it at ``bilm.recipe`` (``/bilm_schema/recipe@recipe``, after ``_self_``,
  so ``recipe`` stays the group's last key).
* ``probe/<name>``: each registered probe (elmo_bench.probe.registry): its ``name`` and its settings dataclass's
  fields with their defaults; ``python run.py probe=<name>`` selects it, ``budget=cpu`` and the suite's presets
  override: ``probe_budget/<budget>_<name>`` and ``probe_preset/<set>_<name>``, generated from the declaration's
  ``budgets`` and ``presets`` (:func:`register_probe_overlays`).
* ``pretrain/schema``: PretrainConfig's fields with their defaults, ``model`` a nested group (the presets override).
* ``task_schema/<name>``: the task's ``name`` (its declaration's), ``head`` (its ``HeadConfig``, tasks/<name>/config.py,
  with the CPU-sized defaults) and its ``elmo`` and ``trainer`` blocks typed key by key; the task's YAML
  takes it first (``/task_schema/<name>@_here_``) and sets no head value; ``head=paper`` and ``budget=cpu``
  override. A head preset may add keys (HeadConfig.PRESET_ONLY, left out here): the head node is open to new keys.
* ``task_data/of_<name>``: the task's own ``data`` keys (TaskDeclaration.data: ``format``, ``train_phrases``,
  ``answer_offsets``, ...) with their defaults; conf/config.yaml merges it under the task's dataset
  (``optional task_data@data: of_${task}``, before ``data``), so a dataset file overrides it.

The ``data`` group's common keys (elmo_bench.data.data_config.DataConfig): each dataset file sets them in its own
order among its own keys, so ``data/schema`` comes after ``_self_`` in its defaults list, every value ``???``
(MISSING): merging it keeps the file's values and key order and leaves each node typed (``data.fraction=abc``
fails at composition). The run-wide ones no dataset file sets (``DataConfig.RUN_WIDE``: allow_identical_splits,
max_overlap) are ``data_defaults/common``, typed and holding DataConfig's defaults, which conf/config.yaml merges
over every dataset (``data_defaults@data: common``): their values are written once, in the dataclass.

One generator, :func:`defaults_node`, makes every node that holds a dataclass's defaults (the all-null and ``???``
shells above are typed from the same hints, ``register_schemas`` stores them all): its fields in order, typed, each
holding its default (a nested dataclass a group of its own, a tuple a typed list, a tuple of pairs a list of int
lists, a tuple of paths an untyped list). In the run groups every key is nullable (null: "not set", the task's
value); in the pretrain group and the recipe only a field typed ``X | None`` is. A schema's keys come in its
dataclass's field order, which is the composed config's order, so the resolved config (run identity, results.json)
is what it was when the YAML files held the values.
"""
from __future__ import annotations

import dataclasses
import typing
from typing import Any, List, Mapping, Optional, Sequence

from omegaconf import (
    MISSING,
    AnyNode,
    BooleanNode,
    DictConfig,
    FloatNode,
    IntegerNode,
    ListConfig,
    OmegaConf,
    StringNode,
)

from elmo_bench.base.paths import CONF_DIR
from elmo_bench.base.plain import optional_parts
from elmo_bench.base.ranges import default_of
from elmo_bench.data.data_config import DataConfig
from elmo_bench.encoders.kinds import encoder_kinds, option_node
from elmo_bench.engine.run_config import Embedder, Logger, Runtime
from elmo_bench.engine.trainer_config import EpochScaling, TrainerConfig
from elmo_bench.pretrain.adapted_recipe import AdaptedRecipe
from elmo_bench.pretrain.pretrain_config import PretrainConfig
from elmo_bench.probe.registry import registered_probes
from elmo_bench.records.elmo_settings import CONFIG_KEY, ElmoSettings
from elmo_bench.tasks.registry import package_dir, registered

_NODES = {bool: BooleanNode, int: IntegerNode, float: FloatNode, str: StringNode}
#: the ``mix`` group's keys in the order of conf/mix/*.yaml (``name`` names the option)
MIX_KEYS = ("name", "mode", "layer", "placement", "lambda", "layer_norm", "gamma_init", "dropout")


def _plain(hint: Any) -> type:
    """``float | None`` → float."""
    return optional_parts(hint)[0]


def _typed_value(kind: Any, value: Any = None, optional: bool = True) -> Any:
    """A node of ``kind`` (bool, int, float, str, or ``list[int]`` / ``tuple[int, ...]`` / ``tuple[tuple[int, int],
    ...]``-like: a typed list whose reference type refuses a non-list at composition, a pair becoming a list of ints)
    holding ``value`` (None: null; a list: its items), null allowed when ``optional``."""
    if typing.get_origin(kind) in (list, tuple):
        item = typing.get_args(kind)[0]
        if typing.get_origin(item) in (list, tuple):
            item = List[typing.get_args(item)[0]]  # type: ignore[misc]
        ref_type = Optional[List[item]] if optional else List[item]  # type: ignore[valid-type]
        content = None if value is None and optional else [list(entry) if isinstance(entry, tuple) else entry
                                                             for entry in value or []]
        return ListConfig(content, element_type=item, is_optional=optional, ref_type=ref_type)
    return _NODES[kind](value, is_optional=optional)


def typed_node(kinds: Mapping[str, Any], values: Mapping[str, Any] | None = None) -> DictConfig:
    """A config of nullable typed values: key → its type, holding ``values`` (a key it lacks: null)."""
    return OmegaConf.create({key: _typed_value(kind, (values or {}).get(key)) for key, kind in kinds.items()})


def _field_node(spec: dataclasses.Field, hint: Any, nullable: bool) -> Any:
    """One field as a node holding its default (none: null): a nested dataclass is a group of its own fields, a
    tuple of paths (``path`` metadata) an untyped list (one path or several: the command has always taken both)."""
    kind = _plain(hint)
    if dataclasses.is_dataclass(kind):
        return defaults_node(kind, nullable=nullable)
    default = default_of(spec)
    default = None if default is dataclasses.MISSING else default
    if spec.metadata.get("path") and typing.get_origin(kind) is tuple:
        return list(default)
    return _typed_value(kind, default, nullable or kind is not hint)


def defaults_node(cls: type, skip: Sequence[str] = (), nullable: bool = True) -> DictConfig:
    """Dataclass ``cls``'s fields in order (but ``skip``), typed, each holding its default. ``nullable``: every key
    takes null (the run groups, where null is "not set"); else only a field typed ``X | None`` does (pretrain)."""
    hints = typing.get_type_hints(cls)
    return OmegaConf.create({spec.name: _field_node(spec, hints[spec.name], nullable)
                             for spec in dataclasses.fields(cls) if spec.name not in skip})


def trainer_schema() -> DictConfig:
    """The ``trainer`` group: TrainerConfig's fields, null (without ``progress``, a top-level key), then
    EpochScaling's with their defaults."""
    hints = typing.get_type_hints(TrainerConfig)
    node = typed_node({name: _plain(hint) for name, hint in hints.items() if name != "progress"})
    return OmegaConf.merge(node, defaults_node(EpochScaling))


def runtime_schema() -> DictConfig:
    """The root's run-time keys: Runtime's fields with their defaults, in its order (conf/config.yaml's)."""
    return defaults_node(Runtime)


def embedder_schema() -> DictConfig:
    """The ``embedder`` group: Embedder's fields with their defaults, in its order (``name``, ``glove``, ``elmo``
    null: each option sets them)."""
    return defaults_node(Embedder)


def logger_schema() -> DictConfig:
    """The ``logger`` group: Logger's fields with their defaults (``mode`` null: each option sets it)."""
    return defaults_node(Logger)


def _elmo_hints() -> dict[str, Any]:
    """ElmoSettings' type hints under their config keys (``lambda``, ``layer``)."""
    return {CONFIG_KEY.get(name, name): hint for name, hint in typing.get_type_hints(ElmoSettings).items()}


def mix_schema() -> DictConfig:
    """The ``mix`` group: ElmoSettings' fields under their config keys (``lambda``, ``layer``) + ``name``."""
    hints = {key: _plain(hint) for key, hint in _elmo_hints().items()}
    return typed_node({key: hints.get(key, str) for key in MIX_KEYS})


def data_schema() -> DictConfig:
    """The ``data`` group's keys every dataset file sets, typed, all ``???``: merged after a dataset file, it types
    what the file set."""
    hints = typing.get_type_hints(DataConfig)
    return OmegaConf.create({spec.name: _NODES[_plain(hints[spec.name])](MISSING, is_optional=True)
                             for spec in dataclasses.fields(DataConfig) if spec.name not in DataConfig.RUN_WIDE})


def data_defaults() -> DictConfig:
    """The run-wide ``data`` keys (``DataConfig.RUN_WIDE``), typed, holding DataConfig's defaults."""
    return defaults_node(DataConfig, tuple(spec.name for spec in dataclasses.fields(DataConfig)
                                           if spec.name not in DataConfig.RUN_WIDE))


def head_schema(cls: type) -> DictConfig:
    """``task.head``: the dataclass's fields in order with their defaults, without those only a head preset sets
    (PRESET_ONLY)."""
    return defaults_node(cls, tuple(getattr(cls, "PRESET_ONLY", ())))


def block_schema(keys: Sequence[str], hints: Mapping[str, Any]) -> DictConfig:
    """A task's ``elmo:`` or ``trainer:`` block: exactly the keys its YAML sets, in their order, each typed by the
    one dataclass that states the types (ElmoSettings, TrainerConfig); a key the dataclass lacks stays untyped."""
    return OmegaConf.create({key: _typed_value(_plain(hints[key])) if key in hints else AnyNode(None)
                             for key in keys})


def task_schema(task: str, cls: type, task_yaml: Mapping[str, Any]) -> DictConfig:
    """A task option: ``name`` (``task``, the declared name: the YAML does not repeat it), ``head`` (the task's
    HeadConfig), then its ``elmo`` and ``trainer`` blocks typed key by key (block_schema), in the task YAML's
    order."""
    node: dict[str, Any] = {"name": StringNode(task, is_optional=True), "head": head_schema(cls)}
    for block, hints in (("elmo", _elmo_hints()), ("trainer", typing.get_type_hints(TrainerConfig))):
        if isinstance(task_yaml.get(block), Mapping):
            node[block] = block_schema(list(task_yaml[block]), hints)
    return OmegaConf.create(node)


#: a probe option's defaults list: the probe run composes no task (conf/config.yaml's default ``task: ner`` set to
#: null, so a task plug-in's problem, e.g. a user folder declaring ``ner``, never reaches a probe run; its data group
#: is then conf/data/default_None.yaml, empty)
NO_TASK = [{"override /task@_global_.task": None}, "_self_"]


def probe_option(name: str, settings: type) -> DictConfig:
    """A ``probe`` group option: ``name`` (the declared probe) then its settings dataclass's fields with their
    defaults, in order (null only where a field is typed ``X | None``): ``python run.py probe=<name>`` composes it,
    and no YAML repeats a value. Its defaults list composes no task (:data:`NO_TASK`)."""
    return OmegaConf.merge(OmegaConf.create({"defaults": NO_TASK, "name": StringNode(name, is_optional=False)}),
                           defaults_node(settings, nullable=False))


def register_probe_overlays(store: Any, name: str, budgets: Mapping[str, Mapping[str, Any]],
                            presets: Mapping[str, Mapping[str, Any]]) -> None:
    """A probe's declared budgets and presets as the nodes conf/config.yaml's defaults list picks by name:
    ``probe_budget/<budget>_<name>`` (``budget=cpu``) and ``probe_preset/<set>_<name>`` (``probe_set=suite``), each
    only the settings it overrides (merged over the probe option, so the keys keep the settings' order)."""
    for group, overlays in (("probe_budget", budgets), ("probe_preset", presets)):
        for choice, values in overlays.items():
            store.store(group=group, name=f"{choice}_{name}", node=OmegaConf.create(dict(values)))


def pretrain_schema() -> DictConfig:
    """The ``pretrain`` group: PretrainConfig's fields with their defaults (the presets only override)."""
    return defaults_node(PretrainConfig, nullable=False)


def recipe_schema() -> DictConfig:
    """bilm=adapted's ``recipe``: AdaptedRecipe's fields with their defaults, null only where its types allow."""
    return defaults_node(AdaptedRecipe, nullable=False)


def register_pretrain_schema() -> None:
    """``pretrain/schema`` in Hydra's ConfigStore (idempotent): conf/pretrain/*.yaml take it first."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(group="pretrain", name="schema", node=pretrain_schema())


#: what the ConfigStore last received its nodes for (the store, the registered tasks and probes): composing again
#: with nothing changed skips rebuilding every node (half the time of a composition)
_REGISTERED_FOR: list[Any] = []


def _registration_key() -> tuple[Any, ...]:
    """The ConfigStore instance and each registered task's and probe's declaration object: a new task or probe (a
    test's, a plug-in's) or a cleared registry makes a new key."""
    from hydra.core.config_store import ConfigStore

    return (id(ConfigStore.instance()), tuple((name, id(d)) for name, d in sorted(registered().items())),
            tuple((name, id(d)) for name, d in sorted(registered_probes().items())),
            tuple((name, id(k)) for name, k in encoder_kinds().items()))


def register_schemas() -> None:
    """``runtime_schema``, ``trainer/schema``, ``mix/schema``, ``embedder/schema``, ``logger/schema``,
    ``bilm_schema/recipe``, ``data/schema``, ``data_defaults/common``, ``pretrain/schema``, ``probe/<name>``,
    ``task_schema/<task>`` and ``task_data/of_<task>`` in Hydra's ConfigStore (idempotent; done again only when the
    registered tasks or probes changed)."""
    from hydra.core.config_store import ConfigStore

    key = _registration_key()
    if _REGISTERED_FOR == [key]:
        return
    _register_nodes(ConfigStore.instance())
    _REGISTERED_FOR[:] = [key]


def _register_nodes(store: Any) -> None:
    """Every node of :func:`register_schemas` into ``store``."""
    store.store(name="runtime_schema", node=runtime_schema())
    store.store(group="trainer", name="schema", node=trainer_schema())
    store.store(group="mix", name="schema", node=mix_schema())
    store.store(group="embedder", name="schema", node=embedder_schema())
    store.store(group="logger", name="schema", node=logger_schema())
    store.store(group="bilm_schema", name="recipe", node=recipe_schema())
    store.store(group="data", name="schema", node=data_schema())
    store.store(group="data_defaults", name="common", node=data_defaults())
    register_pretrain_schema()
    for kind in encoder_kinds().values():   # encoder=<kind>: the option each kind declares (its conf)
        node = option_node(kind)
        if node is not None:
            store.store(group="encoder", name=kind.name, node=node)
    for name, probe in registered_probes().items():
        store.store(group="probe", name=name, node=probe_option(name, probe.settings))
        register_probe_overlays(store, name, probe.budgets, probe.presets)
    for task, declared in registered().items():
        if declared.data is not None:
            store.store(group="task_data", name=f"of_{task}", node=defaults_node(declared.data))
        yaml_path = next((p for p in (CONF_DIR / "task" / f"{task}.yaml",
                                      package_dir(declared) / "conf" / "task" / f"{task}.yaml") if p.is_file()), None)
        if declared.head is not None and yaml_path is not None:
            task_yaml = OmegaConf.to_container(OmegaConf.load(yaml_path))
            store.store(group="task_schema", name=task, node=task_schema(task, declared.head, task_yaml))
