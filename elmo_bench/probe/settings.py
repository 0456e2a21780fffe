"""Settings every UD English-EWT probe shares (``probe.data_dir``, ``probe.max_train_sentences``,
``probe.layers``), as a frozen dataclass the probes' own settings extend; torch-free, so composing a config loads
no model. Every default is written here or in the probe's own dataclass, once (Hydra's ``probe/<name>`` option is
generated from it, elmo_bench.engine.config_schema)."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import check_ranges, ranged

#: UD English-EWT below ``paths.data_root`` (the default ``probe.data_dir``)
UD_EWT = "pos/ud_english_ewt"
TAG_COLUMNS = ("xpos", "upos")
#: the labels a UD probe may read per word: universal POS, the PTB tags, or its relation to its head (the part before
#: ":"; elmo_bench.probe.lib.ud_data.read_labelled)
UD_LABELS = ("upos", "xpos", "deprel")


def dataset(below: str) -> Any:
    """A setting that names a data directory (null: ``below`` under ``paths.data_root``): the probe run's identity
    holds the directory's content fingerprint in its place (``data.<setting>``), so a probe that reads a new dataset
    declares it here, in its own settings, and no engine edit is needed."""
    return field(default=None, metadata={"dataset": below})


def dataset_settings(settings: type) -> dict[str, str]:
    """Setting → the directory below ``paths.data_root`` it reads when null, for every :func:`dataset` field."""
    return {spec.name: spec.metadata["dataset"] for spec in fields(settings) if "dataset" in spec.metadata}


@dataclass(frozen=True)
class UdSettings:
    """The settings of a probe that reads UD English-EWT (en_ewt-ud-{train,dev,test}.conllu, train may be .gz)."""

    data_dir: str | None = dataset(UD_EWT)                   # UD English-EWT directory
    #                                                          (en_ewt-ud-{train,dev,test}.conllu, train may be .gz)
    max_train_sentences: int | None = ranged(None, int, 1, optional=True)   # the first N training sentences
    #                                                                         (null: all of them)
    layers: list[int] | None = None                          # layer indices probed; null: every layer


def choice(default: str, allowed: tuple[str, ...]) -> Any:
    """A setting that takes one of ``allowed`` (checked by :func:`settings_of`, one line naming ``probe.<key>``;
    the generated command line offers them as the flag's choices)."""
    return field(default=default, metadata={"choices": tuple(allowed)})


def redefault(base: type, name: str, default: Any) -> Any:
    """Field ``name`` of settings class ``base`` with another default, its range and choices kept (a probe that is
    another's named setting, e.g. a different default probe)."""
    spec = base.__dataclass_fields__[name]
    return field(default=default, metadata=spec.metadata)


def check_choice(key: str, value: Any, allowed: tuple[str, ...]) -> None:
    """One ConfigError line for a setting outside its set."""
    if value not in allowed:
        raise ConfigError(f"config: probe.{key} expected one of {', '.join(allowed)}, found {value!r}")


def settings_of(cls: type, values: Mapping[str, Any]) -> Any:
    """``cls`` (a probe's settings dataclass) from the composed ``probe`` group: ranges and choices checked (one
    line naming ``probe.<key>``), unknown keys refused; ``name`` (the option's own key) left out."""
    names = {spec.name for spec in fields(cls)}
    unknown = sorted(set(values) - names - {"name"})
    if unknown:
        raise ConfigError(f"config: probe.{unknown[0]} is not a setting of this probe; expected one of "
                          f"{', '.join(sorted(names))}")
    check_ranges(cls, values, "probe")
    settings = cls(**{k: v for k, v in values.items() if k in names})
    for spec in fields(cls):
        if "choices" in spec.metadata:
            check_choice(spec.name, getattr(settings, spec.name), spec.metadata["choices"])
    check = getattr(settings, "check", None)
    if check is not None:
        check()
    return settings
