"""The ``pretrain`` group (``elmo-bench pretrain`` / ``finetune-lm``) as one frozen, typed object, light to import (no
torch): every key's type, default and range written once, here. The defaults are the shipped v2 recipe
(conf/pretrain/default.yaml, TRAINING.md); the ConfigStore node ``pretrain/schema`` is generated from these classes
(elmo_bench.engine.config_schema), the presets only override. :meth:`PretrainConfig.of` is the one place a mapping
becomes a PretrainConfig (a composed config, a test's dict, bilm=adapted's recipe); every pretrain function takes
the object.

Where the code once fell back on other values for an absent key (log_every 50, threads 1, dropout 0.0, min_count 1),
the YAML's values won (25, 2, 0.1, 3): no composed config ever lacked those keys, so they were the values used.
"""
from __future__ import annotations

import dataclasses
import functools
import typing
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.plain import optional_parts, plain_data
from elmo_bench.base.ranges import MAX_SEED, ranged

OPTIMIZERS = ("adagrad", "adam")
#: metadata of the keys that name files or directories: relative paths resolve against the repository root
PATH = {"path": True}
WORK_DIR = "${pretrain.work_dir}"  # what the path defaults below hang from
V2_FILTERS = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256))


def _path(default: Any) -> Any:
    return field(default=default, metadata=PATH)


def refuse_unknown(values: Mapping[str, Any], known: set[str], prefix: str) -> None:
    """ConfigError naming the first key of ``values`` that is not a field."""
    unknown = [str(key) for key in values if key not in known]
    if unknown:
        raise ConfigError(f"config: unknown key {prefix}.{unknown[0]} (known keys: {', '.join(sorted(known))})")


def _fits(value: Any, kind: Any) -> bool:
    origin = typing.get_origin(kind)
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return isinstance(value, tuple) and all(_fits(v, item) for v in value)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def check_types(obj: Any, prefix: str) -> None:
    """Each field of dataclass ``obj`` of its declared type (a range-checked number is checked by its range)."""
    hints = _hints(type(obj))
    for spec in fields(obj):
        kind, optional = optional_parts(hints[spec.name])
        value = getattr(obj, spec.name)
        if (value is None and optional) or "range" in spec.metadata or _fits(value, kind):
            continue
        name = getattr(kind, "__name__", str(kind)).replace("tuple", "list")
        raise ConfigError(f"config: {prefix}.{spec.name} expected {name}{' or null' if optional else ''}, "
                          f"found {value!r}")


@dataclass(frozen=True)
class PretrainModel:
    """``pretrain.model``: the biLM's architecture (bilm-tf's options; v1 and v2 share it)."""

    filters: tuple[tuple[int, int], ...] = V2_FILTERS  # (width, count) of each char-CNN filter
    n_highway: int = 1
    char_dim: int = 16
    activation: str = "relu"
    n_layers: int = 2
    lstm_dim: int = 512
    projection_dim: int = 128
    cell_clip: float | None = 3.0  # null: no clip (an exported biLM may have none)
    proj_clip: float | None = 3.0
    use_skip_connections: bool = True

    def __post_init__(self) -> None:
        check_types(self, "pretrain.model")

    @classmethod
    def of(cls, model_cfg: Mapping[str, Any]) -> "PretrainModel":
        """From ``pretrain.model`` (a mapping); unknown keys refused."""
        refuse_unknown(model_cfg, {spec.name for spec in fields(cls)}, "pretrain.model")
        given = dict(model_cfg)
        if "filters" in given and isinstance(given["filters"], (list, tuple)):
            given["filters"] = tuple(tuple(f) if isinstance(f, (list, tuple)) else f for f in given["filters"])
        return cls(**given)


@dataclass(frozen=True)
class PretrainConfig:
    """A pretraining (or LM fine-tuning) run: corpus, architecture, optimiser, budget, checkpoints, outputs."""

    #: holds the prepared corpus (scripts/prepare_lm_corpus.py) and the run; the shipped biLMs used /work/lm_work
    work_dir: str = _path("lm_work")
    train_files: tuple[str, ...] = _path((f"{WORK_DIR}/novels.train.txt", f"{WORK_DIR}/ptb.train.txt"))
    heldout_files: tuple[str, ...] = _path((f"{WORK_DIR}/ptb.valid.txt", f"{WORK_DIR}/novels.heldout.txt"))
    vocab_file: str | None = _path(None)  # null: counted from train_files (min_count, max_vocab)
    min_count: int = ranged(3, int, 0)
    max_vocab: int | None = ranged(20000, int, 1, optional=True)
    model: PretrainModel = PretrainModel()
    #: v2's phase 2; phase 1 ran 128 up to 6,348,800 tokens (TRAINING.md)
    batch_size: int = ranged(64, int, 1)
    unroll_steps: int = ranged(20, int, 1)
    num_sampled: int = ranged(1024, int, 1)
    dropout: float = ranged(0.1, float, 0, 1, high_open=True)
    optimizer: str = "adagrad"  # one of OPTIMIZERS
    lr: float = ranged(0.2, float, 0, low_open=True)
    initial_accumulator: float | None = ranged(1.0, float, 0, optional=True)  # Adagrad's
    grad_clip: float | None = ranged(10.0, float, 0, low_open=True, optional=True)
    #: the v2 budget (about 13 epochs); null: epochs × corpus tokens
    max_tokens: int | None = ranged(150000000, int, 1, optional=True)
    max_train_seconds: float | None = ranged(None, float, 0, low_open=True, optional=True)
    epochs: int | None = ranged(None, int, 1, optional=True)
    seed: int = ranged(0, int, 0, MAX_SEED)
    threads: int = ranged(2, int, 1)  # torch intra-op threads (both cores: bench/pretrain_speed.py)
    direction_threads: int = ranged(1, int, 1, 2)  # 2 = each LM direction's recurrence in its own thread
    device: str | None = "cpu"  # auto | cpu | cuda | cuda:N (null: auto)
    shuffle: bool = True
    resume: bool = True
    out_dir: str = _path(f"{WORK_DIR}/run_v2")
    export_dir: str | None = _path(f"{WORK_DIR}/run_v2/export")
    checkpoint_every_steps: int | None = ranged(0, int, 0, optional=True)  # 0 or null: never by steps
    checkpoint_every_s: int | None = ranged(300, int, 0, optional=True)  # 0 or null: never by time
    #: null: no series; else a usable biLM exported at every checkpoint (elmo_bench.pretrain.series)
    series_dir: str | None = _path(None)
    log_every: int = ranged(25, int, 1)
    log_file: str | None = _path(f"{WORK_DIR}/run_v2/train_log.jsonl")
    init_dir: str | None = _path(None)  # finetune-lm: the exported biLM to continue (null: the shipped one)

    def __post_init__(self) -> None:
        self._resolve_work_dir()
        for spec in fields(self):
            rule = spec.metadata.get("range")
            if rule is not None:
                rule.check(f"pretrain.{spec.name}", getattr(self, spec.name))
        check_types(self, "pretrain")
        if self.optimizer not in OPTIMIZERS:
            raise ConfigError(f"config: pretrain.optimizer expected one of {list(OPTIMIZERS)}, "
                              f"found {self.optimizer!r}")

    def _resolve_work_dir(self) -> None:
        """The path defaults hang from ``work_dir`` (``${pretrain.work_dir}/run_v2``, as the schema node holds
        them, for Hydra to resolve): an object built without composing resolves them the same way."""
        for spec in fields(self):
            value = getattr(self, spec.name)
            if not spec.metadata.get("path") or not isinstance(self.work_dir, str):
                continue
            if isinstance(value, str):
                object.__setattr__(self, spec.name, value.replace(WORK_DIR, self.work_dir))
            elif isinstance(value, tuple):
                object.__setattr__(self, spec.name, tuple(v.replace(WORK_DIR, self.work_dir)
                                                          if isinstance(v, str) else v for v in value))

    @classmethod
    def of(cls, cfg: Mapping[str, Any]) -> "PretrainConfig":
        """From a mapping (a composed ``pretrain`` group, resolved; a test's dict; bilm=adapted's recipe with its
        run keys): absent keys take the defaults above, unknown keys are refused. A single path where a list is
        expected is a one-item list, as the command always took it."""
        refuse_unknown(cfg, {spec.name for spec in fields(cls)}, "pretrain")
        given = dict(cfg)
        for key in ("train_files", "heldout_files"):
            if key in given and (given[key] is None or isinstance(given[key], (str, list, tuple))):
                given[key] = (given[key],) if isinstance(given[key], str) else tuple(given[key] or ())
        if "model" in given:
            given["model"] = given["model"] if isinstance(given["model"], PretrainModel) else \
                PretrainModel.of(given["model"])
        return cls(**given)

    def mapping(self) -> dict[str, Any]:
        """The plain form (lists, nested dicts): what ``--help`` prints and a subprocess receives as JSON."""
        return plain_data(dataclasses.asdict(self))
