"""The config door of the commands that look at runs without running them (``elmo-bench plan``, ``config``, the
sweep check): one run's config composed as run.py composes it, typed, and a sweep expanded to its jobs as Hydra's
basic sweeper expands it."""
from __future__ import annotations

from typing import Any, Sequence

from elmo_bench.commands.modes import ALL_MODES, expand_modes
from elmo_bench.commands.rows import expand_rows
from elmo_bench.engine.encoder_sweep import drop_foreign_keys
from elmo_bench.engine.probe_config import ProbeRunConfig
from elmo_bench.engine.run_config import RunConfig


def compose_job(overrides: Sequence[str], check: bool = True, files: bool = True, multirun: bool = False) -> Any:
    """One run's config, composed like run.py's (with the hydra node, for the sweep and the choices) and, with
    ``check``, through run.py's door (engine.config_door.resolve_run_config: unknown keys, ranges, data files);
    ``multirun``: a job of a sweep (a ``++encoder.<key>`` of another encoder kind is left out, not refused)."""
    from omegaconf import open_dict

    from elmo_bench.commands.hydra_setup import compose_config, forced_base  # lazy: omegaconf
    from elmo_bench.engine.config_door import resolve_run_config  # lazy: omegaconf

    cfg = compose_config(overrides)
    base = forced_base(overrides)
    if multirun:  # the job as run.py's door leaves it: a ++encoder.<key> of another swept kind out
        drop_foreign_keys(cfg, overrides, base, multirun)
    job = cfg.copy()
    with open_dict(job):
        del job["hydra"]                           # what run.py's job sees
    if check:  # job gets data.name and the choices too
        resolve_run_config(job, overrides, cfg.hydra.runtime.choices, base, files, multirun)
    with open_dict(cfg):
        cfg.choices = {k: v for k, v in cfg.hydra.runtime.choices.items() if not k.startswith("hydra")}
        cfg.data.name = job.data.get("name") or cfg.choices.get("data")
    return cfg


def job_run(overrides: Sequence[str], check: bool = True, files: bool = True,
            multirun: bool = False) -> RunConfig | ProbeRunConfig:
    """One run's RunConfig (elmo_bench.engine.run_config), or a probe run's ProbeRunConfig: :func:`compose_job`,
    without Hydra's node, typed."""
    from omegaconf import OmegaConf, open_dict

    from elmo_bench.engine.config_door import is_probe_job, run_config  # lazy: omegaconf

    cfg = compose_job(overrides, check, files, multirun)
    with open_dict(cfg):
        del cfg["hydra"]
    if is_probe_job(cfg):
        return ProbeRunConfig.of(OmegaConf.to_container(cfg, resolve=True))
    return run_config(cfg)


def expand_sweep(overrides: Sequence[str], stride: int | None = None) -> list[list[str]]:
    """The override lists of every job the command would launch: the experiment's ``hydra.sweeper.params`` then
    the command line (later keys win), comma lists and ranges expanded as Hydra's basic sweeper does; ``stride``:
    ``mix=all_modes`` over every ``stride``-th of the encoder's layers and the last (``plan --stride K``)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    overrides = expand_rows(overrides, lambda job: job_run(job, check=False, files=False))  # row=all
    every_mode = [o for o in overrides if o == ALL_MODES]   # not a config option: expanded below
    overrides = [o for o in overrides if o != ALL_MODES]
    parser = OverridesParser.create()
    # the experiment's own sweep, before the command line's, read from the command line's first job (a key below a
    # swept group, probe=structural,mdl probe.max_epochs=5, composes only with a value of that group chosen)
    first = BasicSweeper.split_arguments(parser.parse_overrides(list(overrides)), None)[0][0]
    cfg = compose_job(first, check=False)
    params = cfg.hydra.get("sweeper", {}).get("params") or {}
    swept = [f"{k}={v}" for k, v in params.items()]
    parsed = parser.parse_overrides([*swept, *overrides])
    jobs = [[*job, *every_mode] for job in BasicSweeper.split_arguments(parsed, None)[0]]
    return expand_modes(jobs, job_run, stride)  # mix=all_modes: every edge-probing mode of the encoder
