"""A run's trainer settings as one dataclass: types, defaults and ranges in one place, and light to import (no
torch), so the config schema (elmo_bench.engine.config_schema) and the check at the door read it before a run starts."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged

OPTIMIZERS = ("adam", "adadelta", "sgd")


@dataclass
class TrainerConfig:
    """A task's optimiser and budget: its task YAML's ``trainer:`` under the ``trainer`` group's non-null
    values (elmo_bench.engine.run_config.Training.of). The field types are the ``trainer`` group's schema
    (elmo_bench.engine.config_schema: a wrong type fails at composition); the ranges, stated here, are checked at the
    door (elmo_bench.engine.config_check.check_trainer). Defaults: what a task's ``trainer:`` may leave out."""

    optimizer: str = "adam"  # one of OPTIMIZERS
    lr: float = ranged(1e-3, float, 0, low_open=True)
    batch_size: int = ranged(32, int, 1)
    eval_batch_size: int = ranged(64, int, 1)
    max_epochs: int = ranged(10, int, 1)
    patience: int = ranged(3, int, 0)
    #: early stopping never ends a run before this many epochs: a small data fraction can score 0 on dev for
    #: several epochs before it finds its first entity, and patience would otherwise stop it there
    min_epochs: int = ranged(0, int, 0, optional=True)
    grad_clip: float | None = ranged(5.0, float, 0, low_open=True, optional=True)
    weight_decay: float = ranged(0.0, float, 0)
    #: Adadelta's decay of the squared-gradient averages (None: torch's 0.9; He et al. 2017 use 0.95)
    rho: float | None = ranged(None, float, 0, 1, optional=True)  # torch.optim.Adadelta: 0 <= rho <= 1
    #: the optimiser's epsilon for adam and adadelta (None: torch's default, 1e-8 and 1e-6); sgd has none
    eps: float | None = ranged(None, float, 0, low_open=True, optional=True)
    #: jiant v1's edge-probing schedule (elmo_bench.engine.lr_plateau): multiply the rate by this factor after more
    #: than lr_plateau_patience epochs in a row whose dev score beat the best by no more than lr_plateau_threshold
    #: (None: off, the rate stays lr; 1.0 keeps it too); a rate below lr_plateau_min_lr ends training (None: never)
    lr_plateau_factor: float | None = ranged(None, float, 0, 1, low_open=True, optional=True)
    lr_plateau_patience: int | None = ranged(None, int, 0, optional=True)
    lr_plateau_threshold: float | None = ranged(None, float, 0, optional=True)
    lr_plateau_min_lr: float | None = ranged(None, float, 0, optional=True)
    progress: bool = True


@dataclass(frozen=True)
class EpochScaling:
    """The ``trainer`` group's keys beyond a task's trainer settings (sample-efficiency sweeps), each default written
    here only: the group's schema carries them (elmo_bench.engine.config_schema), conf/trainer/default.yaml sets
    neither, elmo_bench.engine.run_config.Training applies them."""

    scale_epochs: bool = False        # more epochs for small data fractions
    max_scaled_epochs: int = 50       # the cap on those
