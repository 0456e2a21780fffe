"""A run's configuration as one frozen, typed object: :class:`RunConfig`, made once from the composed config by
:meth:`RunConfig.of` (called by engine.config_door, the one door every run config goes through).

The overlay rule is applied here and nowhere else: the ``mix`` group's non-null values over the task's ``elmo:``
block (:class:`ElmoSettings`), the ``trainer`` group's non-null values over the task's ``trainer:`` block over
TrainerConfig's defaults (:class:`Training`); presets (``head=paper``, ``budget=cpu``) are already composed into
those groups by Hydra. Each part validates itself when it is made (``__post_init__``), in the order the door always
checked a run (runtime, data, trainer, mix, head), with the same one-line ConfigError; so a RunConfig that exists
is a valid one. The engine (engine.experiment, engine.evaluate) and ``elmo-bench plan`` take its parts;
``resolved`` keeps the whole resolved config, which run.json stores and run identity hashes (unchanged).
``elmo-bench config OVERRIDES`` prints one (:func:`describe`).
"""
from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import MAX_SEED, check_number, check_ranges
from elmo_bench.data.data_config import DataConfig
from elmo_bench.encoders.bilm import RANDOM_MODES as BILM_RANDOM_INIT
from elmo_bench.encoders.kinds import default_kind, encoder_kinds
from elmo_bench.encoders.segments import MAX_SEGMENT
from elmo_bench.encoders.settings import check_encoder_settings
from elmo_bench.engine.config_check import check_head, check_trainer
from elmo_bench.engine.fractions import scaled_epochs
from elmo_bench.engine.head_configs import head_config
from elmo_bench.engine.trainer_config import EpochScaling, TrainerConfig
from elmo_bench.pretrain.adapted_recipe import AdaptedRecipe
from elmo_bench.records.elmo_settings import CONFIG_KEY, MODES, PLACEMENTS, TASK_ELMO_DEFAULTS, ElmoSettings

#: the keys of the ``trainer`` group that are no TrainerConfig field (sample-efficiency sweeps: Training's own)
EPOCH_SCALING = tuple(spec.name for spec in fields(EpochScaling))


def given_fields(cls: type, values: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of dataclass ``cls`` that ``values`` sets: the others take the dataclass's defaults (one place)."""
    return {spec.name: values[spec.name] for spec in fields(cls) if spec.name in values}


def _group(config: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """A group every composed config has (``embedder``, ``paths``, ``logger``), with the keys its part requires; one
    ConfigError line for a hand-made config (a run.json edited by hand) that lacks them."""
    value = config.get(key)
    required = {"embedder": ("name", "glove", "elmo"), "paths": ("cache_dir",), "logger": ("mode",)}[key]
    if not isinstance(value, Mapping) or any(name not in value for name in required):
        raise ConfigError(f"config: expected the {key} group with the keys {', '.join(required)}, found {value!r}")
    return value


@dataclass(frozen=True)
class Runtime:
    """How a run computes, never what (but ``seed``): the top-level keys of a run config. The defaults are written
    here only: the ConfigStore's ``runtime_schema`` (elmo_bench.engine.config_schema), which conf/config.yaml's
    defaults list takes just before its own keys, is made from these fields, in this order (the composed config's)."""

    seed: int = 1
    cache: bool = True                # reuse the encoder's activations across runs (elmo_bench/encoders/cache.py)
    max_segment: int = MAX_SEGMENT    # longest piece of a sequence that goes through the biLM at once
    threads: int = 1                  # torch intra-op threads per job (0: torch's own choice is kept at 1)
    device: str = "auto"              # auto | cpu | cuda | cuda:N: the biLM (cache, live layers), heads, losses
    amp: str = "off"                  # off | bf16 | fp16: the task model's forward under autocast (biLM stays fp32)
    progress: bool = True             # progress bars
    shard_sentences: int = 0          # cache entries as shards of N distinct sentences (resumable): 0 = one file

    def __post_init__(self) -> None:
        from elmo_bench.base.device import check_device_spec, normalise_amp  # lazy: torch

        if check_number("seed", self.seed, int, 0) > MAX_SEED:
            raise ConfigError(f"config: seed expected an integer <= {MAX_SEED} (numpy's seed range), found "
                              f"{self.seed}")
        check_device_spec(self.device)
        normalise_amp(self.amp)
        check_number("threads", self.threads, int, 0)
        check_number("max_segment", self.max_segment, int, 1)
        check_number("shard_sentences", self.shard_sentences, int, 0)
        if not isinstance(self.cache, bool):
            raise ConfigError(f"config: cache expected true or false, found {self.cache!r}")

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> "Runtime":
        return cls(**{"seed": config.get("seed"), **given_fields(cls, config)})


@dataclass(frozen=True)
class DataPart:
    """The ``data`` group: its common keys typed (:class:`DataConfig`) and every key as the readers take it."""

    common: DataConfig
    values: Mapping[str, Any]          # the whole plain ``data`` mapping (each dataset's own keys too)

    def __post_init__(self) -> None:
        check_ranges(DataConfig, self.values, "data")  # fraction in (0, 1], max_overlap a share in [0, 1]

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> "DataPart":
        return cls(DataConfig(**given_fields(DataConfig, data)), dict(data))

    @property
    def name(self) -> str | None:
        return self.common.name

    @property
    def fraction(self) -> float:
        """The share of the train split a run trains on."""
        return float(self.common.fraction)

    def plain(self) -> dict[str, Any]:
        """A copy of every key, for a reader (Task.read) or a record."""
        return copy.deepcopy(dict(self.values))


@dataclass(frozen=True)
class Training:
    """The trainer settings a run uses: the task's ``trainer:`` block under the ``trainer`` group's non-null
    values (TrainerConfig's defaults for what neither sets), and the sample-efficiency epoch scaling."""

    settings: TrainerConfig
    scale_epochs: bool = EpochScaling.scale_epochs
    max_scaled_epochs: int = EpochScaling.max_scaled_epochs

    def __post_init__(self) -> None:
        check_trainer(asdict(self.settings))
        check_number("trainer.max_scaled_epochs", self.max_scaled_epochs, int, 1)

    @classmethod
    def of(cls, task_trainer: Mapping[str, Any], group: Mapping[str, Any], progress: bool) -> "Training":
        merged = {**asdict(TrainerConfig()), **task_trainer}
        merged.update({k: v for k, v in group.items() if v is not None and k not in EPOCH_SCALING})
        merged["progress"] = progress
        settings = TrainerConfig(**given_fields(TrainerConfig, merged))
        # max_scaled_epochs is required (the trainer group's schema sets it): absent is "found None", as always
        return cls(settings, **{**{k: group[k] for k in EPOCH_SCALING if k in group},
                                "max_scaled_epochs": group.get("max_scaled_epochs")})

    def for_fraction(self, fraction: float) -> TrainerConfig:
        """The settings with epochs (and patience) scaled for a small data fraction when ``scale_epochs``."""
        base = self.settings.max_epochs
        epochs = scaled_epochs(base, fraction, self.scale_epochs, cap=int(self.max_scaled_epochs))
        # patience grows with the epochs: a tiny fraction may score 0 for many short epochs before it finds entities
        return replace(self.settings, max_epochs=epochs,
                       patience=math.ceil(self.settings.patience * epochs / max(base, 1)))


#: the mix modes that take ``mix.layer`` (the one layer; the top of the cumulative prefix)
LAYER_MODES = ("layer", "cumulative")


def check_mix_layer(mix: Mapping[str, Any]) -> None:
    """``mix.layer`` where its mode takes one (an integer >= 0; the encoder's top is checked once its layers are
    known: canonical_mix), and null elsewhere: a learned or average mix given a layer would be recorded as that mode
    while the user meant one layer (or the reverse), so the combination is refused rather than one of them dropped."""
    mode, layer = mix.get("mode"), mix.get("layer")
    if mode in LAYER_MODES:
        check_number("mix.layer", layer, int, 0)
    elif layer is not None:
        raise ConfigError(f"config: mix.layer={layer!r} is used by mix=layer and mix=cumulative only, not by "
                          f"mix={mix.get('name') or mode} (mode {mode}): drop mix.layer, or choose mix=layer")


@dataclass(frozen=True)
class MixPart:
    """The ``mix`` group and the task's ``elmo:`` block, as composed (null in ``mix``: the task's value)."""

    mix: Mapping[str, Any]
    task_elmo: Mapping[str, Any]

    def __post_init__(self) -> None:
        mix, task_elmo = self.mix, self.task_elmo
        for where, source in (("mix", mix), ("task.elmo", task_elmo)):  # null: the task's value (mix), the default
            check_ranges(ElmoSettings, source, where, CONFIG_KEY, optional=True)
        if mix.get("mode") not in MODES:
            raise ConfigError(f"config: mix.mode expected one of {list(MODES)}, found {mix.get('mode')!r}")
        check_mix_layer(mix)
        placement = mix.get("placement") or task_elmo.get("placement", TASK_ELMO_DEFAULTS["placement"])
        if placement not in PLACEMENTS:
            raise ConfigError(f"config: mix.placement expected one of {list(PLACEMENTS)}, found {placement!r}")

    @property
    def settings(self) -> ElmoSettings:
        """The run's ELMo settings, whole: the mix's overrides over the task's ``elmo:`` block."""
        return ElmoSettings.from_config(self.task_elmo, self.mix)


@dataclass(frozen=True)
class TaskPart:
    """The task: its name, its head's settings (checked against its HeadConfig), its ELMo settings (mix over the
    task's block) and its trainer settings (trainer group over the task's block)."""

    name: str
    head: Mapping[str, Any]
    elmo: ElmoSettings
    training: Training

    def __post_init__(self) -> None:
        check_head(self.head, head_config(str(self.name)))

    def head_settings(self) -> dict[str, Any]:
        """A copy of ``task.head`` for the task's build_head."""
        return copy.deepcopy(dict(self.head))


@dataclass(frozen=True)
class Embedder:
    """What the task model embeds words with: a GloVe table, ELMo mixes, or both. The defaults are written here
    only: the ConfigStore's ``embedder/schema`` (elmo_bench.engine.config_schema) is made from these fields, in this
    order (the composed config's); each conf/embedder option takes it first and sets its name, glove and elmo."""

    name: str
    glove: bool
    elmo: bool
    glove_source: str = "kumo"        # kumo (offline GloVe 6B 50d from PyPI) | file (glove_path, e.g.
    glove_path: str | None = None     # glove.840B.300d.txt; experiment=paper_table1 sets both)
    glove_trainable: bool = False


@dataclass(frozen=True)
class Bilm:
    """The ``bilm`` group: the biLM files (the encoder when ``encoder.kind`` is bilm), and bilm=adapted's recipe,
    bilm=random's initialisation."""

    name: str | None = None
    options: str | None = None
    weights: str | None = None
    random_init: str | None = None
    random_seed: int | None = None
    base_dir: str | None = None
    recipe: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        """bilm=random's mode and bilm=adapted's recipe checked at the door, before anything is read (types, ranges,
        the optimizer)."""
        if self.random_init is not None and self.random_init not in BILM_RANDOM_INIT:
            raise ConfigError(f"config: bilm.random_init expected one of {', '.join(BILM_RANDOM_INIT)}, found "
                              f"{self.random_init!r}", key="bilm.random_init")
        if self.recipe is not None:
            AdaptedRecipe(**given_fields(AdaptedRecipe, self.recipe))


@dataclass(frozen=True)
class EncoderPart:
    """The frozen encoder: the ``encoder`` group (checked as encoders.settings states, its ``kind`` always set:
    :meth:`of`) and the biLM files."""

    spec: Mapping[str, Any]
    bilm: Bilm

    def __post_init__(self) -> None:
        check_encoder_settings(self.spec)

    @classmethod
    def of(cls, spec: Mapping[str, Any], bilm: Bilm) -> "EncoderPart":
        """The group with its ``kind`` set: a config without the ``encoder`` group or its ``kind`` (a run.json from
        before the group) means the default kind (elmo_bench.encoders.kinds.default_kind: the biLM of the ``bilm``
        group, as conf/config.yaml's default option says)."""
        return cls({"kind": default_kind().name, **spec}, bilm)

    @property
    def kind(self) -> str:
        return str(self.spec["kind"])

    def plain(self) -> dict[str, Any]:
        """A copy of the encoder group, for encoders.build."""
        return copy.deepcopy(dict(self.spec))


@dataclass(frozen=True)
class Paths:
    """Where things live (never part of a run's identity)."""

    cache_dir: str
    results_dir: str | None = None
    data_root: str | None = None
    glove: str | None = None
    package_root: str | None = None


@dataclass(frozen=True)
class Logger:
    """The ``logger`` group (wandb): offline by default (conf/config.yaml). Its defaults are written here only, as
    Embedder's: ``logger/schema`` is made from these fields and each conf/logger option sets its ``mode``."""

    mode: str                         # disabled | offline | online
    project: str = "elmo_bench"


def recorded_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A resolved config as results.json records it: the groups of the encoder kinds the run does not use (another
    encoder than the biLM: the ``bilm`` group, the shipped biLM's name and files, which the run never read) and
    their Hydra choices left out, so the record names the encoder that ran and no other. run.json and the identity keep the whole
    config (their ``bilm.*`` keys are identity-free: elmo_bench.engine.run_identity.IGNORED)."""
    out = copy.deepcopy(dict(config))
    used = str((out.get("encoder") or {}).get("kind") or default_kind().name)
    unread = {group for name, kind in encoder_kinds().items() if name != used for group in kind.groups}
    for group in sorted(unread):
        out.pop(group, None)
    if unread and isinstance(out.get("choices"), Mapping):
        out["choices"] = {k: v for k, v in out["choices"].items() if k not in unread}
    return out


@dataclass(frozen=True)
class RunConfig:
    """One run's whole configuration, typed and valid (see the module docstring). ``resolved``: the resolved
    config as plain containers, exactly what run.json stores and run identity hashes; never mutated (``config()``
    hands out a copy)."""

    task: TaskPart
    mix: MixPart
    data: DataPart
    embedder: Embedder
    encoder: EncoderPart
    runtime: Runtime
    paths: Paths
    logger: Logger
    choices: Mapping[str, str] = field(default_factory=dict)
    resolved: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> "RunConfig":
        """The RunConfig of a resolved config (``OmegaConf.to_container(cfg, resolve=True)``, or a run.json's
        ``config``); ConfigError (one line) for the first thing wrong, in the door's order. Keys an older
        run.json lacks take the fields' defaults."""
        runtime = Runtime.of(config)
        data = DataPart.of(config.get("data") or {})
        task = config.get("task") or {}
        training = Training.of(task.get("trainer") or {}, config.get("trainer") or {}, runtime.progress)
        mix = MixPart(dict(config.get("mix") or {}), dict(task.get("elmo") or {}))
        task_part = TaskPart(str(task.get("name")), dict(task.get("head") or {}), mix.settings, training)
        encoder = EncoderPart.of(config.get("encoder") or {}, Bilm(**given_fields(Bilm, config.get("bilm") or {})))
        embedder, paths, logger = (part(**given_fields(part, _group(config, key))) for part, key in (
            (Embedder, "embedder"), (Paths, "paths"), (Logger, "logger")))
        return cls(task_part, mix, data, embedder, encoder, runtime, paths, logger,
                   dict(config.get("choices") or {}), copy.deepcopy(dict(config)))

    def config(self) -> dict[str, Any]:
        """A copy of the resolved config (run.json's ``config``, run identity's input)."""
        return copy.deepcopy(dict(self.resolved))

    def with_mix(self, mix: Mapping[str, Any]) -> "RunConfig":
        """This run with the ``mix`` group replaced (the canonical mix of a cumulative run,
        elmo_bench.records.elmo_settings.canonical_mix): ELMo settings and resolved config follow."""
        part = MixPart(dict(mix), self.mix.task_elmo)
        resolved = {**self.config(), "mix": dict(mix)}
        return replace(self, mix=part, task=replace(self.task, elmo=part.settings), resolved=resolved)

    def trainer(self, fraction: float) -> TrainerConfig:
        """The trainer settings of a run training on ``fraction`` of its train split."""
        return self.task.training.for_fraction(fraction)


def describe(run: RunConfig) -> dict[str, Any]:
    """Every effective value of a run, by part (``elmo-bench config``): what the engine takes, after the overlay
    rule; ``resolved`` (the composed config) is left out, its values are all here."""
    out = {name: asdict(getattr(run, name)) for name in ("task", "data", "embedder", "encoder", "runtime",
                                                         "paths", "logger")}
    training = out["task"].pop("training")
    out["task"]["trainer"] = {**training.pop("settings"), **training}  # the merged settings, then epoch scaling
    out["data"] = out["data"]["values"]
    out["mix"] = dict(run.mix.mix)
    out["choices"] = dict(run.choices)
    return out


def check_run(cfg: Mapping[str, Any], trainer: Mapping[str, Any]) -> None:
    """The checks RunConfig's parts make, on a resolved config (plain containers, possibly partial) and its
    merged trainer settings: each part built from what is there, in the door's order."""
    Runtime.of(cfg)
    DataPart.of(cfg.get("data") or {})
    check_trainer(trainer)
    check_number("trainer.max_scaled_epochs", (cfg.get("trainer") or {}).get("max_scaled_epochs"), int, 1)
    MixPart(cfg.get("mix") or {}, (cfg.get("task") or {}).get("elmo") or {})
    task = cfg.get("task") or {}
    check_head(task.get("head") or {}, head_config(str(task.get("name"))))
