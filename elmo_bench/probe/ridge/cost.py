"""What ``elmo-bench plan`` prices for probe ridge: its sentences (UD English-EWT, train cut as the probe cuts it)
and the FLOPs of its closed-form fit over the cached layers."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from elmo_bench.probe.lib.ud_data import tagged_sentences
from elmo_bench.probe.probe_cost import TAG_CLASSES, ProbeCost, SplitCount, probed
from elmo_bench.probe.ridge.config import RidgeSettings
from elmo_bench.probe.settings import UD_EWT

#: FLOPs of a symmetric eigendecomposition of a d x d matrix, in units of d³ (tridiagonalisation and QR, about)
EIGH_FLOPS = 9


def sentences(settings: RidgeSettings, data_root: Path) -> dict[str, list[list[str]]]:
    """The words per split the probe sends through the encoder."""
    return tagged_sentences(Path(settings.data_dir) if settings.data_dir else data_root / UD_EWT, settings.tags,
                            settings.max_train_sentences)


def cost(settings: RidgeSettings, sizes: Mapping[str, SplitCount], layers: int, dim: int) -> ProbeCost:
    """F = L' x [2 d (d + K) T_train + 9 d³ + G (4 d² K + 2 d K (T_dev + T_test))]: the moments XᵀX and XᵀY over
    the training tokens, one eigendecomposition, then per ridge value two (d x d)(d x K) products and the scores of
    dev and test; L' probed layers, d the width, K the tags (xpos 49, upos 17), G ``len(ridge_grid)``. One pass
    over each split serves every probed layer."""
    classes, grid = TAG_CLASSES[settings.tags], len(settings.ridge_grid)
    train, dev, test = sizes["train"].tokens, sizes["dev"].tokens, sizes["test"].tokens
    per_layer = (2 * dim * (dim + classes) * train + EIGH_FLOPS * dim ** 3
                 + grid * (4 * dim * dim * classes + 2 * dim * classes * (dev + test)))
    count = probed(settings.layers, layers)
    return ProbeCost(count * per_layer, f"{count} layers x (moments over train, eigh d {dim}, {grid} ridge values)")
