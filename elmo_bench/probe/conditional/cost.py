"""What ``elmo-bench plan`` prices for probe conditional: the sentences it sends through the encoder (UD EWT train
cut to ``probe.max_train_sentences``, dev when the MLP-1 family stops early on it, cut to
``probe.max_dev_sentences``, and test) and the FLOPs of its fits over the cached layers, per family, baseline and
probed layer. With ``probe.baseline`` naming ``random`` the run also reads the encoder's ``random_init=all`` twin
over the same sentences: the cost says so (``ProbeCost.twin``) and plan prices that second encoder. Torch-free."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from elmo_bench.probe.conditional.config import ConditionalSettings
from elmo_bench.probe.lib.ud_data import read_labelled
from elmo_bench.probe.probe_cost import TAG_CLASSES, ProbeCost, SplitCount, converged_fit_flops, epochs_flops, probed
from elmo_bench.probe.settings import UD_EWT


def sentences(settings: ConditionalSettings, data_root: Path) -> dict[str, list[list[str]]]:
    """The words of the splits the probe encodes (``settings.encoded_splits``), read, cut and checked as it reads
    them."""
    read = read_labelled(Path(settings.data_dir) if settings.data_dir else data_root / UD_EWT, settings.tags,
                         settings.max_train_sentences, settings.max_dev_sentences)
    return {s: [list(ex["tokens"]) for ex in read.splits[s]] for s in settings.encoded_splits}


def input_widths(baseline: str, layers: int, dim: int) -> list[int]:
    """The input width of every fit one baseline makes over ``layers`` probed layers of width ``dim`` (the word
    lookup counts as one input column: a gathered row a token): none, the layer alone (the constant costs
    nothing); layer0, B once and [B; ℓ] per layer; word, the lookup once and [word; ℓ] per layer; random, the
    twin's ℓ and [twin ℓ; ℓ] per layer."""
    per_layer = {"none": [dim], "layer0": [2 * dim], "word": [dim + 1], "random": [dim, 2 * dim]}[baseline]
    once = {"none": [], "layer0": [dim], "word": [1], "random": []}[baseline]
    return once + layers * per_layer


def linear_flops(settings: ConditionalSettings, sizes: Mapping[str, SplitCount], width: int) -> float:
    """One converged softmax fit of ``width`` inputs: at most ``max_iter`` L-BFGS passes over train (6 w K T) and
    the test tokens scored (2 w K S)."""
    return converged_fit_flops(settings.max_iter, width, TAG_CLASSES[settings.tags], sizes["train"].tokens,
                               sizes["test"].tokens)


def mlp1_flops(settings: ConditionalSettings, sizes: Mapping[str, SplitCount], width: int) -> float:
    """One MLP-1 fit of ``width`` inputs (P = w h + h K weights): ``max_epochs`` epochs of training steps and the
    dev loss, then dev and test scored (elmo_bench.probe.probe_cost.epochs_flops)."""
    params = width * settings.hidden + settings.hidden * TAG_CLASSES[settings.tags]
    return epochs_flops(params, sizes, settings.max_epochs)


def cost(settings: ConditionalSettings, sizes: Mapping[str, SplitCount], layers: int, dim: int) -> ProbeCost:
    """F = Σ over families V (``probe.probe``) and baselines B (``probe.baseline``) of Σ over B's fits (widths w:
    none, n fits of d; layer0, d + n of 2d; word, 1 + n of d + 1; random, n of d and n of 2d; n probed layers of
    width d, the word lookup one column) of: linear, max_iter x 6 w K T + 2 w K S (K classes of ``probe.tags``,
    upos 17 / xpos 49 / deprel 36; T train and S test tokens; L-BFGS stops at ``tol``: an upper bound); mlp1,
    max_epochs x (6 P T + 2 P D) + 2 P (D + S) with P = w h + h K and D dev tokens. The constant predictor, the
    standardisation and the bootstrap are not counted. ``random`` also reads the encoder's random_init=all twin
    (``twin``). K counts every class of the full training split: a cut one can have fewer."""
    count = probed(settings.layers, layers)
    fits = {"linear": linear_flops, "mlp1": mlp1_flops}
    total = sum(fits[family](settings, sizes, width) for family in settings.probe
                for baseline in settings.baselines for width in input_widths(baseline, count, dim))
    return ProbeCost(total, f"{count} layers x baselines {','.join(settings.baselines)} x families "
                            f"{','.join(settings.probe)} (linear <= max_iter {settings.max_iter}; K "
                            f"{TAG_CLASSES[settings.tags]} {settings.tags})",
                     twin="random" in settings.baselines)
