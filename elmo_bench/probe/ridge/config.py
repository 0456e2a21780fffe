"""Probe ``ridge``: per layer, ridge regression of the one-hot tag onto the layer's standardised features, solved
in closed form from XᵀX and XᵀY accumulated over batches of the extraction (``probe.stream=true``: no (tokens, dim)
matrix of a layer is ever built) or over the gathered matrix (``probe.stream=false``: the numbers agree to
rounding), the ridge chosen on dev from ``probe.ridge_grid`` (elmo_bench.probe.ridge.solve, elmo_bench.probe.lib.streamed).
Torch-free: composing loads no model."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.lib.streamed import BATCH_TOKENS
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import TAG_COLUMNS, UdSettings, check_choice

#: per-token ridge strengths tried on dev (features standardised: one grid suits every layer and width)
DEFAULT_RIDGES = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)


@dataclass(frozen=True)
class RidgeSettings(UdSettings):
    """``probe.<key>`` of probe ridge."""

    tags: str = "xpos"                                                   # xpos | upos
    ridge_grid: list[float] = field(default_factory=lambda: list(DEFAULT_RIDGES))   # each > 0; chosen on dev
    stream: bool = True                      # moments over batches (true) or over the gathered matrix (false)
    batch_tokens: int = ranged(BATCH_TOKENS, int, 1)                    # tokens per streamed batch at most

    def check(self) -> None:
        """What a range cannot say: the tag column's set; every ridge value positive, finite and once."""
        check_choice("tags", self.tags, TAG_COLUMNS)
        check_ridges(self.ridge_grid)


def check_ridges(grid: list[float]) -> None:
    """One ConfigError line unless ``grid`` holds distinct positive finite numbers (λ ≤ 0 leaves R + λI singular on
    a layer whose features are linearly dependent)."""
    if not grid or len(set(grid)) != len(grid) or any(not math.isfinite(v) or v <= 0 for v in grid):
        raise ConfigError(f"config: probe.ridge_grid expected distinct positive finite numbers, found {list(grid)}")


PROBE = ProbeDeclaration("ridge", ".probe:run", RidgeSettings, data="ud_ewt_pos",
                         predicts="a part-of-speech tag per word", record_task="ridge_probe",
                         sentences=".cost:sentences", cost=".cost:cost", documented=UD_EWT_SIZES,
                         # budget=cpu: the first 2,000 UD EWT training sentences, as probe pos (a closed-form fit:
                         # no epochs or iterations to bound; the encoder's pass over the sentences is the cost)
                         budgets={"cpu": {"max_train_sentences": 2000}},
                         report=(".report:SECTION",))
