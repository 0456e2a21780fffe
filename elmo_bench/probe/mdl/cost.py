"""What ``elmo-bench plan`` prices for probes mdl and mdl_mlp: their sentences (UD English-EWT, train cut as the
probe cuts it) and their training FLOPs over the cached layers."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from elmo_bench.probe.lib.ud_data import tagged_sentences
from elmo_bench.probe.mdl.config import MdlSettings
from elmo_bench.probe.probe_cost import TAG_CLASSES, ProbeCost, SplitCount, classifier_params, epochs_flops, probed
from elmo_bench.probe.settings import UD_EWT

#: elmo_bench.probe.mdl.online_code.FRACTIONS, written here torch-free: block i's probe trains on the first FRACTIONS[i-1]
#: of the training sentences, and a final probe on all of them
FRACTIONS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.0625, 0.125, 0.25, 0.5, 1.0)


def sentences(settings: MdlSettings, data_root: Path) -> dict[str, list[list[str]]]:
    """The words per split the probe sends through the encoder."""
    return tagged_sentences(Path(settings.data_dir) if settings.data_dir else data_root / UD_EWT, settings.tags,
                            settings.max_train_sentences)


def cost(settings: MdlSettings, sizes: Mapping[str, SplitCount], layers: int, dim: int) -> ProbeCost:
    """F = L' x c x B x [E x (6 P T_train x s / B + 2 P T_dev) + 2 P (T_dev + T_test)] + L' x c x 2 P T_train: B = 11
    probes (10 blocks and the final one) each trained from scratch for at most E ``max_epochs`` with dev early
    stopping, over prefixes that sum to s = Σ FRACTIONS[:-1] + 1 ≈ 2 x the training tokens; each block then
    coded (a forward over train, once). P the probe's weights (linear: d x K; mlp1: d x h + h x K; mlp2: + h x h),
    K the tags (xpos 49, upos 17), c 2 with ``control`` (the control task's labels coded too), L' probed layers."""
    classes = TAG_CLASSES[settings.tags]
    kind = "converged" if settings.probe == "linear" else settings.probe   # mdl's linear probe: one d x K layer
    params = classifier_params(kind, dim, classes, settings.hidden, settings.hidden)
    blocks = len(FRACTIONS)
    share = sum(FRACTIONS[:-1]) + FRACTIONS[-1]
    per_block = epochs_flops(params, sizes, settings.max_epochs, passes=share / blocks)
    codings = 2 if settings.control else 1
    count = probed(settings.layers, layers)
    flops = count * codings * (blocks * per_block + 2 * params * sizes["train"].tokens)
    return ProbeCost(flops, f"{count} layers x {codings} labellings x {blocks} {settings.probe} probes "
                            f"(~{share:.2f} x train tokens) x {settings.max_epochs} epochs")
