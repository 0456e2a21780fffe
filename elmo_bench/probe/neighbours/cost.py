"""What ``elmo-bench plan`` prices for probe neighbours: the SemCor sentences that hold a query word (found as the
probe finds them) and the FLOPs of comparing every context with every other of its word over the cached layers."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from elmo_bench.probe.lib.semcor import read_semcor, token_lists
from elmo_bench.probe.neighbours.config import SEMCOR, NeighboursSettings
from elmo_bench.probe.neighbours.contexts import collect
from elmo_bench.probe.probe_cost import ProbeCost, SplitCount, probed


def sentences(settings: NeighboursSettings, data_root: Path) -> dict[str, list[list[str]]]:
    """``semcor``: the sentences the probe sends through the encoder."""
    where = Path(settings.semcor) if settings.semcor else data_root / SEMCOR
    return {"semcor": token_lists(collect(read_semcor(where, progress=False), settings.words, settings.max_contexts,
                                          where).sentences)}


def cost(settings: NeighboursSettings, sizes: Mapping[str, SplitCount], layers: int, dim: int) -> ProbeCost:
    """No training: F = 2 (L' + 1) d S², the cosine of every pair of contexts in L' probed layers and their average,
    S the sentences read (an upper bound: one context per sentence, all of one word). Negligible beside the
    encoder."""
    views = probed(settings.layers, layers) + 1
    count = sizes["semcor"].sentences
    return ProbeCost(2 * views * dim * count * count, f"{views} views: cosine of every pair of contexts (no training)")
