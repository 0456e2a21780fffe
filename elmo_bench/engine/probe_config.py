"""A probe run's configuration as one frozen, typed object: :class:`ProbeRunConfig`, made once by the door
(elmo_bench.engine.config_door) from a composed config whose ``probe`` group is chosen (``python run.py
probe=<name>``). A probe run has no task, embedder, mix or trainer: it takes the ``probe`` group (the declaration's
settings dataclass: ranges and sets checked here, one line naming ``probe.<key>``), the frozen encoder (the
``encoder`` and ``bilm`` groups, as a task run's), the run-time keys, paths and logger. ``resolved`` keeps exactly
those parts of the composed config: what run.json stores and run identity hashes (elmo_bench.engine.probe_run).
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.kinds import kind_groups
from elmo_bench.engine.run_config import Bilm, EncoderPart, Logger, Paths, Runtime, given_fields
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.registry import probe_declaration
from elmo_bench.probe.settings import settings_of

#: the top-level keys of a composed config that a probe run takes (the rest: a task run's groups, unused), the
#: encoder kinds' own groups (the biLM's ``bilm``: elmo_bench.encoders.kinds.kind_groups) after ``encoder``
PROBE_RUN_GROUPS = ("probe", "encoder", "paths", "logger")
#: the groups a probe run refuses when the command line sets them (a probe has no task, embedder, mix or trainer)
TASK_ONLY = ("task", "embedder", "mix", "trainer", "head", "data")


def refuse_task_keys(overrides: Sequence[str]) -> None:
    """``probe=`` with ``task=`` (or another task-run group) on one command line: one ConfigError line."""
    for override in overrides:
        key = override.lstrip("+~").split("=", 1)[0]
        if key.split(".", 1)[0] in TASK_ONLY:
            raise ConfigError(f"config: {override} with probe=: a probe run has no {key.split('.', 1)[0]} (it probes "
                              f"the encoder's layers with the probe's own data); drop {override}, or drop probe= to "
                              f"train a task")


@dataclass(frozen=True)
class ProbePart:
    """The chosen probe: its declaration and its typed settings."""

    declaration: ProbeDeclaration
    settings: Any

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> "ProbePart":
        if not isinstance(values, Mapping) or not values.get("name"):
            raise ConfigError(f"config: expected the probe group (probe=<name>), found {values!r}")
        declared = probe_declaration(str(values["name"]))
        return cls(declared, settings_of(declared.settings, values))

    @property
    def name(self) -> str:
        return self.declaration.name


@dataclass(frozen=True)
class ProbeRunConfig:
    """One probe run's whole configuration, typed and valid (see the module docstring)."""

    probe: ProbePart
    encoder: EncoderPart
    runtime: Runtime
    paths: Paths
    logger: Logger
    choices: Mapping[str, str] = field(default_factory=dict)
    resolved: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> "ProbeRunConfig":
        """The ProbeRunConfig of a resolved config (plain containers); ConfigError (one line) for the first thing
        wrong: run-time keys, the probe's settings, the encoder."""
        runtime = Runtime.of(config)
        probe = ProbePart.of(config.get("probe") or {})
        encoder = EncoderPart.of(config.get("encoder") or {}, Bilm(**given_fields(Bilm, config.get("bilm") or {})))
        paths = Paths(**given_fields(Paths, config.get("paths") or {}))
        logger = Logger(**given_fields(Logger, config.get("logger") or {"mode": "offline"}))
        groups = (*PROBE_RUN_GROUPS[:2], *kind_groups(), *PROBE_RUN_GROUPS[2:])
        kept = {key: config[key] for key in (*groups, *(s.name for s in fields(Runtime))) if key in config}
        chosen = ("probe", "encoder", *kind_groups(), "budget", "probe_set")
        choices = {k: v for k, v in (config.get("choices") or {}).items() if k in chosen}
        return cls(probe, encoder, runtime, paths, logger, choices, copy.deepcopy(kept))

    def config(self) -> dict[str, Any]:
        """A copy of the probe run's part of the resolved config (run.json's ``config``, identity's input)."""
        return copy.deepcopy(dict(self.resolved))


def describe_probe(run: ProbeRunConfig) -> dict[str, Any]:
    """Every effective value of a probe run (``elmo-bench config probe=...``): the probe (its name, what it reads
    and predicts, its settings), the encoder, run-time keys, paths, logger, choices."""
    declared = run.probe.declaration
    return {"probe": {"name": declared.name, "data": declared.data, "predicts": declared.predicts,
                      "settings": asdict(run.probe.settings)},
            "encoder": asdict(run.encoder), "runtime": asdict(run.runtime), "paths": asdict(run.paths),
            "logger": asdict(run.logger), "choices": dict(run.choices)}
