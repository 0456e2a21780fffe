"""bilm=adapted's recipe (the paper's section 3.4, Table 7): how the base biLM is fine-tuned on a task's training
text, written once, here, light to import (no torch). The ConfigStore node ``bilm_schema/recipe`` is generated from
it (elmo_bench.engine.config_schema), which conf/bilm/adapted.yaml places at ``bilm.recipe``, so
``bilm.recipe.lr=abc`` fails at composition; elmo_bench.pretrain.adapted_bilm fills what a caller's recipe leaves out
from it. The recipe becomes a PretrainConfig when the model is built, so each field takes PretrainConfig's type and
range for the same key (stated there once, with elmo_bench.base.ranges); only the defaults are the recipe's own.
"""
from __future__ import annotations

from dataclasses import Field, asdict, dataclass, field, fields
from typing import Any

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import check_ranges
from elmo_bench.pretrain.pretrain_config import OPTIMIZERS, PretrainConfig, check_types

_PRETRAIN: dict[str, Field] = {spec.name: spec for spec in fields(PretrainConfig)}


def _as_pretrain(key: str, default: Any) -> Any:
    """A recipe field holding ``default``, with PretrainConfig's range for ``key`` (none: no range)."""
    return field(default=default, metadata=_PRETRAIN[key].metadata)


@dataclass(frozen=True)
class AdaptedRecipe:
    """bilm-tf's training settings for one epoch of the task's text (Table 7); types as PretrainConfig's."""

    epochs: int | None = _as_pretrain("epochs", 1)
    batch_size: int = _as_pretrain("batch_size", 64)
    unroll_steps: int = _as_pretrain("unroll_steps", 20)
    num_sampled: int = _as_pretrain("num_sampled", 1024)
    dropout: float = _as_pretrain("dropout", 0.1)
    optimizer: str = _as_pretrain("optimizer", "adagrad")  # one of OPTIMIZERS
    lr: float = _as_pretrain("lr", 0.2)
    initial_accumulator: float | None = _as_pretrain("initial_accumulator", 1.0)  # Adagrad's
    grad_clip: float | None = _as_pretrain("grad_clip", 10.0)
    seed: int = _as_pretrain("seed", 0)
    threads: int = _as_pretrain("threads", 1)  # torch intra-op threads while the model is built

    def __post_init__(self) -> None:
        check_ranges(type(self), asdict(self), "bilm.recipe")
        check_types(self, "bilm.recipe")
        if self.optimizer not in OPTIMIZERS:
            raise ConfigError(f"config: bilm.recipe.optimizer expected one of {list(OPTIMIZERS)}, "
                              f"found {self.optimizer!r}")

    def mapping(self) -> dict[str, Any]:
        """The recipe as a plain mapping in field order (what ``bilm.recipe`` composes to)."""
        return asdict(self)
