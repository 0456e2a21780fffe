"""What ``elmo-bench plan`` prices for probe wsd: its sentences (SemCor, cut as the probe cuts it, and each
evaluation set) and the FLOPs of its centroids and nearest-centroid scoring over the cached layers."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from elmo_bench.probe.lib.semcor import read_semcor, token_lists
from elmo_bench.probe.probe_cost import ProbeCost, SplitCount
from elmo_bench.probe.wsd import data as wsd_data
from elmo_bench.probe.wsd.config import EVAL_ROOT, SEMCOR, WsdSettings

#: candidate senses a test word is compared with, on average (an assumption: WordNet's polysemous lemmas)
CANDIDATES = 10


def sentences(settings: WsdSettings, data_root: Path) -> dict[str, list[list[str]]]:
    """``train``: the SemCor sentences embedded for the centroids; then each evaluation set by its name."""
    semcor = read_semcor(settings.semcor or data_root / SEMCOR, settings.max_train_sentences,
                                  progress=False)
    out = {"train": token_lists(semcor)}
    root = settings.eval_root or data_root / EVAL_ROOT
    for name in settings.sets:
        out[name] = token_lists(wsd_data.read_eval_set(root, name)[0])
    return out


def cost(settings: WsdSettings, sizes: Mapping[str, SplitCount], layers: int, dim: int) -> ProbeCost:
    """No training: F = 2 L d (T_train + C Σ_sets T_set): summing each layer's vectors into sense centroids (an
    upper bound: only tagged words are summed) and comparing every evaluation word with C = 10 candidate centroids
    per layer (an upper bound: only instances are compared). Negligible beside the encoder."""
    evaluated = sum(s.tokens for name, s in sizes.items() if name != "train")
    flops = 2 * layers * dim * (sizes["train"].tokens + CANDIDATES * evaluated)
    return ProbeCost(flops, f"{layers} layers: sense centroids and nearest-centroid scoring (no training)")
