"""Hydra entry point: one experiment, or a sweep with -m. Without `task=`/`experiment=` it runs the quickstart.

    python run.py                                              # quickstart: NER sample, GloVe vs +ELMo, table
    python run.py logger=disabled seed=2                       # the quickstart with those overrides
    python run.py task=ner                                     # the full CoNLL-2003 NER run
    python run.py task=sst embedder=glove_elmo                 # one run (the paper's +ELMo row for SST-5)
    python run.py -m task=ner embedder=glove,glove_elmo seed=1,2,3
    python run.py probe=structural budget=cpu                  # a probe of every layer of the biLM (docs/probes.md)
    python run.py -m experiment=probe_suite budget=cpu         # every probe on one encoder

Quiet by default: progress and result lines; wandb's offline messages go to the run's log (run.log). `-v` (or
`hydra.verbose=true`) shows everything.

Bad data or config values end the run with one line on stderr and exit code 2; ``--debug`` (or
``HYDRA_FULL_ERROR=1``) shows the traceback instead.
"""
from __future__ import annotations

import json
import logging
import os
import sys
from functools import partial
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from elmo_bench.commands.guard import debug_requested, exit_cleanly_on_sigterm, guarded, report_hydra_errors
from elmo_bench.commands.hydra_records import HydraRecord
from elmo_bench.commands.hydra_setup import forced_base, register_resolvers, sweep_path
from elmo_bench.commands.main_args import main_args
from elmo_bench.commands.probe_sweep_args import probe_sweep_args
from elmo_bench.commands.rows import with_rows
from elmo_bench.commands.sweep_check import check_sweep
from elmo_bench.engine.encoder_sweep import encoder_sweep_args
from elmo_bench.identity.history import older_run_dir

register_resolvers()
log = logging.getLogger("run")
DEBUG = debug_requested(sys.argv)
if DEBUG:  # Hydra's switch for the complete traceback
    os.environ["HYDRA_FULL_ERROR"] = "1"


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> float | None:
    return guarded(lambda: _run(cfg), DEBUG)


def composed_run(overrides: list[str]):
    """A job's RunConfig without the door's checks (the encoder's layer count, for ``row=all``)."""
    from elmo_bench.commands.plan import job_run  # lazy: torch

    return job_run(overrides, check=False, files=False)


def _remove_if_empty(run_dir: Path) -> None:
    """Bad input writes nothing: the run directory Hydra made (empty) before the door refused goes again."""
    if run_dir.is_dir() and not any(run_dir.iterdir()):
        run_dir.rmdir()


def _run(cfg: DictConfig) -> float | None:
    from elmo_bench.engine.config_door import resolve_run_config
    from elmo_bench.engine.experiment import run_experiment
    from elmo_bench.engine.probe_config import ProbeRunConfig
    from elmo_bench.engine.probe_run import PRINTED, run_probe

    hydra_cfg = HydraConfig.get()
    record = HydraRecord.of(cfg, HydraConfig.instance().cfg)  # .hydra/, written once the run owns its directory
    overrides = list(hydra_cfg.overrides.task)
    # the door plan and evaluate use too: unknown +key/++key, ranges, data files; errors: one line via guarded()
    try:
        run = resolve_run_config(cfg, overrides, hydra_cfg.runtime.choices, forced_base(overrides),  # a RunConfig
                                 multirun=getattr(hydra_cfg.mode, "name", hydra_cfg.mode) == "MULTIRUN")
    except BaseException:
        _remove_if_empty(Path(hydra_cfg.runtime.output_dir))
        raise
    if isinstance(run, ProbeRunConfig):  # probe=<name>: the probe's one JSON object, printed last
        results = run_probe(run, Path(hydra_cfg.runtime.output_dir), on_claimed=record.claim)
        print(json.dumps(results.get(PRINTED)), flush=True)
        return None
    output = Path(hydra_cfg.runtime.output_dir)  # a run named by the older scheme resumes there (identity matching)
    name = partial(sweep_path, hydra_cfg.job.override_dirname, _root_=cfg)
    results = run_experiment(run, output, on_claimed=record.claim, older=older_run_dir(output, name))
    dev = results["metrics"].get("dev", {})
    return dev.get(results["main_metric"])


if __name__ == "__main__":
    sys.argv[:] = main_args(sys.argv)  # no task=/experiment= → the quickstart; -v → hydra.verbose=true
    sys.argv[:] = probe_sweep_args(sys.argv)  # -m probe=a,b probe.<key>=v: ++probe.<key>=v (Hydra's multirun)
    sys.argv[:] = encoder_sweep_args(sys.argv)  # -m encoder=bilm,transformers encoder.path=DIR: ++ where one lacks it
    sys.argv[:] = guarded(lambda: with_rows(sys.argv, composed_run), DEBUG)  # experiment=probe_pos row=all
    exit_cleanly_on_sigterm()
    guarded(lambda: check_sweep(sys.argv), DEBUG)  # -m seed=1,abc: every swept value through the door first
    report_hydra_errors(DEBUG)
    main()
