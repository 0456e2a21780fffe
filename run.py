"""Hydra entry point: one experiment, or a sweep with -m. `python run.py` alone runs the embedded quickstart.

    python run.py                                              # quickstart: NER sample, GloVe vs +ELMo, table
    python run.py task=sst embedder=glove_elmo                 # one run (the paper's +ELMo row for SST-5)
    python run.py -m task=ner embedder=glove,glove_elmo seed=1,2,3

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
from omegaconf import DictConfig, open_dict

from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.commands.guard import debug_requested, exit_cleanly_on_sigterm, guarded, report_hydra_errors

register_resolvers()
log = logging.getLogger("run")
DEBUG = debug_requested(sys.argv)
if DEBUG:  # Hydra's switch for the complete traceback
    os.environ["HYDRA_FULL_ERROR"] = "1"


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> float | None:
    return guarded(lambda: _run(cfg), DEBUG)


def _run(cfg: DictConfig) -> float | None:
    from elmo_bench.engine.experiment import run_experiment

    hydra_cfg = HydraConfig.get()
    with open_dict(cfg):
        cfg.choices = {k: v for k, v in hydra_cfg.runtime.choices.items() if not k.startswith("hydra")}
        cfg.data.name = cfg.data.get("name") or cfg.choices.get("data")  # the dataset, also behind default_<task>
    results = run_experiment(cfg, Path(hydra_cfg.runtime.output_dir))  # errors: one line via guarded()
    dev = results["metrics"].get("dev", {})
    return dev.get(results["main_metric"])


if __name__ == "__main__":
    if len(sys.argv) == 1:
        sys.argv.append("experiment=quickstart")
    exit_cleanly_on_sigterm()
    report_hydra_errors(DEBUG)
    main()
