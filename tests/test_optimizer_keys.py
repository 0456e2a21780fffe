"""``trainer.rho`` and ``trainer.eps``: Adadelta gets He et al.'s rho 0.95 and eps 1e-6 from the SRL and SQuAD paper
presets; null keeps torch's defaults for every optimiser; out-of-range values are one-line config errors."""
from __future__ import annotations

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import open_dict

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.engine.config_check import check_trainer
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import trainer_config
from elmo_bench.engine.loop import TrainerConfig, make_optimizer
from tests.conftest import REPO

register_resolvers()


def _compose(overrides: list[str]):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    with open_dict(cfg):
        cfg.data.name = "x"
    return cfg


def _group(cfg: TrainerConfig) -> dict:
    return make_optimizer(torch.nn.Linear(2, 2), cfg).param_groups[0]


def test_null_keeps_torchs_defaults():
    assert (_group(TrainerConfig(optimizer="adadelta", lr=1.0))["rho"],
            _group(TrainerConfig(optimizer="adadelta", lr=1.0))["eps"]) == (0.9, 1e-6)
    assert _group(TrainerConfig(optimizer="adam"))["eps"] == 1e-8
    assert "eps" not in _group(TrainerConfig(optimizer="sgd", eps=1e-3))  # sgd has no epsilon: ignored


def test_rho_and_eps_reach_adadelta_and_eps_reaches_adam():
    group = _group(TrainerConfig(optimizer="adadelta", lr=1.0, rho=0.95, eps=1e-6))
    assert (group["rho"], group["eps"]) == (0.95, 1e-6)
    assert _group(TrainerConfig(optimizer="adam", eps=1e-6, rho=0.5))["eps"] == 1e-6


@pytest.mark.parametrize("task, rho, eps, optimizer", [("srl", 0.95, 1e-6, "adadelta"), ("squad", 0.95, 1e-6, "adadelta"),
                                                       ("ner", None, None, "adam"), ("snli", None, None, "adam")])
def test_paper_presets_set_adadelta_rho_and_eps(task, rho, eps, optimizer):
    cfg = _compose([f"task={task}", "head=paper"])
    trainer = trainer_config(run_config(cfg), 1.0)
    assert (trainer.optimizer, trainer.rho, trainer.eps) == (optimizer, rho, eps)
    if optimizer == "adadelta":
        group = _group(trainer)
        assert (group["rho"], group["eps"]) == (0.95, 1e-6)
    # the trainer group's keys override the preset's
    assert trainer_config(run_config(_compose([f"task={task}", "head=paper", "trainer.rho=0.5"])), 1.0).rho == 0.5
    assert run_config(_compose([f"task={task}"])).task.training.settings.rho is None  # the CPU-sized task configs: torch's default


@pytest.mark.parametrize("key, value, message", [
    ("rho", 1.5, "trainer.rho expected a number >= 0 and <= 1 or null, found 1.5"),
    ("rho", -0.1, "trainer.rho expected a number >= 0 and <= 1 or null, found -0.1"),
    ("rho", "abc", "trainer.rho expected a number >= 0 and <= 1 or null, found 'abc'"),
    ("eps", 0.0, "trainer.eps expected a number > 0 or null, found 0.0"),
    ("eps", -1e-6, "trainer.eps expected a number > 0 or null, found -1e-06")])
def test_out_of_range_rho_and_eps_are_one_line_errors(key, value, message):
    settings = {**TrainerConfig().__dict__, key: value}
    with pytest.raises(ConfigError, match="^config: " + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        check_trainer(settings)
    check_trainer({**TrainerConfig().__dict__, "rho": 0.95, "eps": 1e-6})  # the paper's values pass
