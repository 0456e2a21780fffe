"""Hydra entry point: one experiment, or a sweep with -m. Without `task=`/`experiment=` it runs the quickstart.

    python run.py                                              # quickstart: NER sample, GloVe vs +ELMo, table
    python run.py logger=disabled seed=2                       # the quickstart with those overrides
    python run.py task=ner                                     # the full CoNLL-2003 NER run
    python run.py task=sst embedder=glove_elmo                 # one run (the paper's +ELMo row for SST-5)
    python run.py -m task=ner embedder=glove,glove_elmo seed=1,2,3

Quiet by default: progress and result lines; wandb's offline messages go to the run's log (run.log). `-v` (or
`hydra.verbose=true`) shows everything.

Bad data or config values end the run with one line on stderr and exit code 2; ``--debug`` (or
``HYDRA_FULL_ERROR=1``) shows the traceback instead.
"""
from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf, open_dict

from elmo_bench.engine.config_check import check_added_keys
from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.commands.main_args import main_args
from elmo_bench.commands.guard import debug_requested, exit_cleanly_on_sigterm, guarded, report_hydra_errors

register_resolvers()
log = logging.getLogger("run")
CONF_DIR = Path(__file__).resolve().parent / "conf"
DEBUG = debug_requested(sys.argv)
if DEBUG:  # Hydra's switch for the complete traceback
    os.environ["HYDRA_FULL_ERROR"] = "1"


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> float | None:
    return guarded(lambda: _run(cfg), DEBUG)


def _run(cfg: DictConfig) -> float | None:
    from elmo_bench.engine.experiment import run_experiment

    hydra_cfg = HydraConfig.get()
    # +trainer.max_epoch=3 (a typo) would be read by nothing: an error naming the closest known key
    check_added_keys(list(hydra_cfg.overrides.task), OmegaConf.to_container(cfg), CONF_DIR)
    with open_dict(cfg):
        cfg.choices = {k: v for k, v in hydra_cfg.runtime.choices.items() if not k.startswith("hydra")}
        cfg.data.name = cfg.data.get("name") or cfg.choices.get("data")  # the dataset, also behind default_<task>
    results = run_experiment(cfg, Path(hydra_cfg.runtime.output_dir))  # errors: one line via guarded()
    dev = results["metrics"].get("dev", {})
    return dev.get(results["main_metric"])


if __name__ == "__main__":
    sys.argv[:] = main_args(sys.argv)  # no task=/experiment= → the quickstart; -v → hydra.verbose=true
    exit_cleanly_on_sigterm()
    report_hydra_errors(DEBUG)
    main()
