"""What ``elmo-bench plan`` prices for probe erasure: the sentences it sends through the encoder (UD EWT train cut
to ``probe.max_train_sentences``, and test; dev is read but never encoded) and the FLOPs of fitting and scoring its
erasers over the cached layers. Torch-free."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from elmo_bench.probe.erasure.config import ErasureSettings
from elmo_bench.probe.lib.ud_data import read_labelled
from elmo_bench.probe.probe_cost import (
    TAG_CLASSES,
    ProbeCost,
    SplitCount,
    converged_fit_flops,
    probed,
)
from elmo_bench.probe.settings import UD_EWT

#: the splits the probe encodes (elmo_bench.probe.erasure.probe.layer_erasers: train and test)
ENCODED = ("train", "test")
#: FLOPs counted for one dense d x d factorisation (an eigendecomposition or an SVD with vectors: ~ 11 d³)
FACTORISATION = 11


def sentences(settings: ErasureSettings, data_root: Path) -> dict[str, list[list[str]]]:
    """The words of the train (cut) and test splits, read and checked as the probe reads them."""
    read = read_labelled(Path(settings.data_dir) if settings.data_dir else data_root / UD_EWT, settings.tags,
                         settings.max_train_sentences)
    return {s: [list(ex["tokens"]) for ex in read.splits[s]] for s in ENCODED}


def layer_flops(settings: ErasureSettings, sizes: Mapping[str, SplitCount], dim: int) -> float:
    """One layer's erasure: fitting (covariance and cross-covariance, factorisations), the saved covariances, the
    eraser applied to both splits, and the two converged probes (before and after) with their test scores."""
    classes = TAG_CLASSES[settings.tags]
    rank = classes - 1
    train, test = sizes["train"].tokens, sizes["test"].tokens
    fit = 2 * train * dim * dim + 2 * train * dim * classes + 2 * FACTORISATION * dim ** 3 + 6 * dim * dim * classes
    covariances = 2 * (2 * train * dim * dim)          # the saved Σ, and the biLM's per-stream refits (a bound)
    apply = 4 * (train + test) * dim * rank
    probes = 2 * converged_fit_flops(settings.max_iter, dim, classes, train, test)
    return fit + covariances + apply + probes


def cost(settings: ErasureSettings, sizes: Mapping[str, SplitCount], layers: int, dim: int) -> ProbeCost:
    """F = Σ over probed layers (width d; K classes of ``probe.tags``, upos 17 / xpos 49 / deprel 36, r = K − 1;
    T train and S test tokens) of: the LEACE fit 2 T d² + 2 T d K + 22 d³ (the covariance's eigendecomposition
    and the rank's SVD, 11 d³ each) + 6 d² K; the saved covariance and the biLM's per-stream erasers ≤ 4 T d²;
    the eraser on both splits 4 (T + S) d r; and two converged probes (before, after), each ≤ max_iter x 6 d K T
    (L-BFGS stops at ``tol``: an upper bound, and
    what plan prices) + 2 d K S scoring. K counts every class of the full training split:
    a cut one can have fewer."""
    count = probed(settings.layers, layers)
    # the converged probes are L-BFGS's (priced at its rate) at max_iter each: the committed budget=cpu run took 108 s
    # of CPU, as max_iter passes at that rate predict (the probe after erasure has little left to converge to)
    lbfgs = 2 * count * converged_fit_flops(settings.max_iter, dim, TAG_CLASSES[settings.tags], sizes["train"].tokens,
                                            sizes["test"].tokens)
    return ProbeCost(count * layer_flops(settings, sizes, dim),
                     f"{count} layers x (LEACE fit + 2 converged probes, <= max_iter {settings.max_iter}; "
                     f"K {TAG_CLASSES[settings.tags]} {settings.tags})", lbfgs_bound=lbfgs, lbfgs_expected=lbfgs)
