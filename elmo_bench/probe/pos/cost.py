"""What ``elmo-bench plan`` prices for probes pos and pos_controls: their sentences (UD English-EWT, train and dev
cut as the probe cuts them) and their training FLOPs over the cached layers."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from elmo_bench.probe.lib.ud_data import tagged_sentences
from elmo_bench.probe.pos.config import PosSettings
from elmo_bench.probe.probe_cost import (
    EXTRA_FITS,
    TAG_CLASSES,
    ProbeCost,
    SplitCount,
    classifier_params,
    converged_fit_flops,
    epochs_flops,
    expected_fit_flops,
)
from elmo_bench.probe.settings import UD_EWT

#: the GloVe row's width (glove.840B.300d)
GLOVE_DIM = 300


def sentences(settings: PosSettings, data_root: Path) -> dict[str, list[list[str]]]:
    """The words per split the probe sends through the encoder."""
    return tagged_sentences(Path(settings.data_dir) if settings.data_dir else data_root / UD_EWT, settings.tags,
                            settings.max_train_sentences, settings.max_dev_sentences)


def row_widths(settings: PosSettings, layers: int, dim: int) -> list[int]:
    """The feature width of every row probed: each probed layer and their average (d), GloVe (300) with
    ``probe.glove``; ``probe.rows`` keeps the rows it names."""
    names = [f"layer_{k}" for k in (settings.layers if settings.layers is not None else range(layers))]
    rows = {**{name: dim for name in names}, "average": dim}
    if settings.glove:
        rows["glove"] = GLOVE_DIM
    return [w for name, w in rows.items() if settings.rows is None or name in settings.rows]


def converged_flops(settings: PosSettings, sizes: Mapping[str, SplitCount], width: int, classes: int
                    ) -> tuple[float, float]:
    """The L-BFGS probe on one row: at most ``max_iter`` full-batch passes (forward and gradient, 6 w K a train
    token) per L2 value of the grid, each fit scored on dev and test (2 w K a token); with ``control``, one fit per
    seed at the real task's chosen L2. (That bound, the expectation): the expectation's fits at
    EXPECTED_ITERATIONS each, and EXTRA_FITS more a row for the L2 search's extension."""
    seeds = len(settings.seeds) if settings.control else 0
    train, scored = sizes["train"].tokens, sizes["dev"].tokens + sizes["test"].tokens
    bound = (len(settings.l2_grid) + seeds) * converged_fit_flops(settings.max_iter, width, classes, train, scored)
    expected = (len(settings.l2_grid) + EXTRA_FITS + seeds) * expected_fit_flops(settings.max_iter, width, classes,
                                                                                  train, scored)
    return bound, expected


def cost(settings: PosSettings, sizes: Mapping[str, SplitCount], layers: int, dim: int) -> ProbeCost:
    """F = Σ over rows (width w) of Σ over ``probe.probe``: the converged probe, ≤ (|l2_grid| [+ seeds: control])
    x ``max_iter`` x 6 w K T_train (an upper bound: L-BFGS stops at ``tol``; expected: (|l2_grid| + EXTRA_FITS
    [+ seeds]) x min(max_iter, EXPECTED_ITERATIONS) iterations, ``lbfgs_expected``); each Adam probe (P weights: linear
    w x rank + rank x K, mlp1 w x h + h x K, mlp2 + h x h), seeds x c x [E x (6 P T_train + 2 P T_dev) + 2 P (T_dev +
    T_test)], c 2 with ``control``, E ``max_epochs``; K the tags (xpos 49, upos 17)."""
    classes = TAG_CLASSES[settings.tags]
    widths = row_widths(settings, layers, dim)
    flops = lbfgs_bound = lbfgs_expected = 0.0
    for width in widths:
        for kind in settings.probe:
            if kind == "converged":
                bound, expected = converged_flops(settings, sizes, width, classes)
                flops, lbfgs_bound, lbfgs_expected = flops + bound, lbfgs_bound + bound, lbfgs_expected + expected
                continue
            params = classifier_params(kind, width, classes, settings.hidden, settings.rank)
            fits = len(settings.seeds) * (2 if settings.control else 1)
            flops += fits * epochs_flops(params, sizes, settings.max_epochs)
    control = " with control" if settings.control else ""
    return ProbeCost(flops, f"{len(widths)} rows x {'+'.join(settings.probe)}{control} (converged: <= max_iter "
                            f"{settings.max_iter} x {len(settings.l2_grid)} L2; Adam: <= {settings.max_epochs} "
                            f"epochs x {len(settings.seeds)} seeds)", lbfgs_bound=lbfgs_bound,
                     lbfgs_expected=lbfgs_expected)
