"""What ``elmo-bench plan`` prices for probe structural: its sentences (UD English-EWT's trees, train cut as the
probe cuts it) and its training FLOPs over the cached layers."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from elmo_bench.probe.lib.ud_data import tree_sentences
from elmo_bench.probe.probe_cost import ProbeCost, SplitCount, probed
from elmo_bench.probe.settings import UD_EWT
from elmo_bench.probe.structural.config import StructuralSettings


def sentences(settings: StructuralSettings, data_root: Path) -> dict[str, list[list[str]]]:
    """The words per split the probe sends through the encoder (its data directory: ``probe.data_dir`` or UD EWT
    below ``data_root``)."""
    return tree_sentences(Path(settings.data_dir) if settings.data_dir else data_root / UD_EWT,
                          settings.max_train_sentences)


def cost(settings: StructuralSettings, sizes: Mapping[str, SplitCount], layers: int, dim: int) -> ProbeCost:
    """F = L' x [E x (3 f T_train + f T_dev) + f (T_dev + T_test)], with the forward FLOPs of both probes per token
    f = 2 (2 d r) + 3 n r + 3 r: the distance and the depth probe's projection B (d x r), the pairwise squared
    distances of each word to the n = Σn²/Σn words of its sentence (token-weighted), the depth's squared norm; a
    training step 3x the forward. L' probed layers, E ``max_epochs`` (an upper bound: dev early stopping may end
    sooner), d the encoder's width, r ``rank`` (null: d). Each probed layer reads every split's layers once."""
    rank = settings.rank or dim
    pair = sizes["train"].pair_length
    forward = 2 * (2 * dim * rank) + 3 * pair * rank + 3 * rank
    train, dev, test = sizes["train"].tokens, sizes["dev"].tokens, sizes["test"].tokens
    per_layer = settings.max_epochs * (3 * forward * train + forward * dev) + forward * (dev + test)
    count = probed(settings.layers, layers)
    return ProbeCost(count * per_layer, f"{count} layers x {settings.max_epochs} epochs x (distance + depth probe, "
                                        f"rank {rank}, d {dim})", reads=count)
