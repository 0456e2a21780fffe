"""The one door every run config goes through: ``run.py``, ``elmo-bench plan`` and ``elmo-bench evaluate`` compose
(or, for evaluate, read) a config and hand it to :func:`resolve_run_config`, which checks it and returns it. So an
unknown ``+key`` or ``++key``, a bad sweep value (``seed=1,abc``), ``trainer.batch_size=0``, a data path that is a
FIFO or a device, a local encoder directory that is not there, are the same one line wherever they are typed, and
nothing is read, priced or written before the check. What comes out is a typed, frozen
:class:`~elmo_bench.engine.run_config.RunConfig` (the overlay rule applied once, every part validated): the
engine, ``plan`` and ``evaluate`` take it, never the DictConfig (tests/test_config_signatures.py).
"""
from __future__ import annotations

import stat
from pathlib import Path
from typing import Any, Mapping, Sequence

from omegaconf import DictConfig, OmegaConf, open_dict

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import CONF_DIR
from elmo_bench.encoders.erase_settings import check_erase_files
from elmo_bench.encoders.settings import check_encoder_path, check_kind_keys
from elmo_bench.engine.config_check import check_added_keys
from elmo_bench.engine.encoder_sweep import drop_foreign_keys
from elmo_bench.engine.probe_config import ProbeRunConfig, refuse_task_keys
from elmo_bench.engine.run_config import RunConfig
from elmo_bench.identity.rules import flatten


def is_probe_job(cfg: Any) -> bool:
    """Does the composed config choose a probe (``probe=<name>``): a probe run, not a task run?"""
    probe = cfg.get("probe") if hasattr(cfg, "get") else None
    return probe is not None


def resolve_run_config(cfg: DictConfig, overrides: Sequence[str] = (), choices: Mapping[str, str] | None = None,
                       base: Mapping[str, Any] | None = None, files: bool = True,
                       multirun: bool = False) -> RunConfig | ProbeRunConfig:
    """``cfg`` (a job's composed config, without Hydra's node), checked and typed: its RunConfig, with ``choices``
    (Hydra's group choices) and ``data.name`` set; ConfigError (one line) for the first thing wrong.

    ``overrides``: the job's command-line overrides (``+key`` / ``++key`` are checked against the config);
    ``base``: the config composed without the ``++`` overrides, needed only when there are some (a ``++key`` that
    ``base`` lacks is refused like ``+key``); ``files``: also check the files the config names (False only where
    paths are placeholders, as in the docs' commands); ``multirun``: a job of a sweep, where a ``++encoder.<key>``
    its encoder kind lacks but another has is left out (elmo_bench.engine.encoder_sweep), not refused.
    Idempotent: evaluate calls it on a run's stored config. ``cfg`` gets the choices and data.name too (plan reads
    the sweep from it). A config choosing a probe (``probe=<name>``) is a probe run: its ProbeRunConfig
    (elmo_bench.engine.probe_config), ``task=`` beside it refused.
    """
    overrides = drop_foreign_keys(cfg, overrides, base, multirun)  # encoder=a,b encoder.<key of b>=v
    plain = OmegaConf.to_container(cfg)
    if isinstance(plain.get("encoder"), Mapping):  # +encoder.layers on the biLM: the line naming who reads it
        check_kind_keys(plain["encoder"])
    check_added_keys(list(overrides), plain, CONF_DIR, base)
    with open_dict(cfg):
        if choices is not None:
            cfg.choices = {k: v for k, v in choices.items() if not k.startswith("hydra")}
        cfg.data.name = cfg.data.get("name") or (cfg.get("choices") or {}).get("data")
    if is_probe_job(cfg):
        refuse_task_keys(overrides)
        probe_run = ProbeRunConfig.of(OmegaConf.to_container(cfg, resolve=True))
        if files:
            check_encoder_path(probe_run.encoder.spec)
            check_erase_files(probe_run.encoder.spec, probe_run.encoder.bilm.options)
        return probe_run
    run = run_config(cfg)
    if files:
        check_data_files(run.data.values)
        check_encoder_path(run.encoder.spec)
        check_erase_files(run.encoder.spec, run.encoder.bilm.options)
    return run


def run_config(cfg: DictConfig) -> RunConfig:
    """The RunConfig of a composed config, without the door's override and file checks (a test's composed
    config, plan's stand-in data): the one place a DictConfig becomes typed."""
    return RunConfig.of(OmegaConf.to_container(cfg, resolve=True))


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def check_data_files(data: Mapping[str, Any]) -> None:
    """Every data path that exists is a regular file or a directory (SRL and coref read directories): a FIFO,
    ``/dev/zero`` or a socket would hang the reader (and the run identity's content hash) forever."""
    for key, value in flatten(data, "data.").items():
        if not isinstance(value, str) or not value or "\n" in value:
            continue
        path = Path(value)
        try:
            mode = path.stat().st_mode
        except (OSError, ValueError):
            continue  # absent: the reader says "file not found" (or the value is no path at all)
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise ConfigError(f"config: {key}={value} is {_kind(mode)}; expected a regular data file (or a "
                              f"directory where the dataset reads one)")
