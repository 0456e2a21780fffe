"""SST-5 metric: fine-grained accuracy on the roots of the trees, in percent."""
from __future__ import annotations

from typing import Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.data.textio import open_text
from elmo_bench.tasks.sst.reader import N_CLASSES, read_trees


def accuracy(gold: Sequence[int], predicted: Sequence[int]) -> float:
    """Percent of equal labels (0.0 for an empty set)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    return 100.0 * sum(int(g) == int(p) for g, p in zip(gold, predicted)) / len(gold) if gold else 0.0


def score_files(*paths: str) -> dict[str, float]:
    """``score_files(trees, predictions)``: the gold PTB-tree file and a file with one predicted label (0..4) per
    tree, in order → {"accuracy": percent} on the roots."""
    if len(paths) != 2:
        raise ValueError("sst score needs two files: the gold PTB trees and the predictions (one label 0..4 a line)")
    gold = [ex["label"] for ex in read_trees(paths[0], "gold", "none")]
    if not gold:
        raise DataError(f"{paths[0]}: no trees; expected a gold file of PTB-style sentiment trees")
    predicted: list[int] = []
    with open_text(paths[1]) as handle:
        for lineno, line in enumerate(handle, start=1):
            value = line.strip()
            if not value:
                continue
            if value not in {str(k) for k in range(N_CLASSES)}:
                raise DataError(f"{paths[1]}:{lineno}: expected a label 0..4, got {value!r}")
            predicted.append(int(value))
    if len(predicted) != len(gold):
        raise DataError(f"{paths[1]}: {len(predicted)} predictions for {len(gold)} trees in {paths[0]}")
    return {"accuracy": accuracy(gold, predicted)}
