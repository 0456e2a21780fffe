"""The WSD probe's evaluation (paper Table 5): every view and baseline on every Raganato set, with the data it
needs, as dataclasses (elmo_bench/probe/wsd/probe.py runs it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from elmo_bench.probe.wsd import centroids as wsd
from elmo_bench.probe.wsd.metric import score


@dataclass
class WsdInputs:
    """All of SemCor, the part embedded for the centroids, and every evaluation set with its gold keys."""

    semcor: list[Any]
    train: list[Any]
    eval_sets: dict[str, tuple[list[Any], dict[str, set[str]]]]


@dataclass
class WsdLayers:
    train: Any
    eval_sets: dict[str, Any]
    bilm: dict[str, Any]
    seconds_in_bilm: float


@dataclass
class Fallbacks:
    mfs: dict[tuple[str, str], str]
    wordnet: Optional[Callable[[str, str], Optional[str]]]


@dataclass
class Evaluation:
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    keys: dict[str, dict[str, list[tuple[str, str]]]] = field(default_factory=dict)   # set → view → (id, key)
    answered_by: dict[str, dict[str, int]] = field(default_factory=dict)
    coverage: dict[str, dict[str, list[int]]] = field(default_factory=dict)            # set → view → [ans, total]


def evaluate(centroids: Any, inputs: WsdInputs, layers: WsdLayers, fallbacks: Fallbacks,
             progress: bool) -> Evaluation:
    """Every view and baseline on every set: scores (percent), keys in instance order, coverage."""
    result = Evaluation()
    for name, (sentences, gold) in inputs.eval_sets.items():
        predictions, how = wsd.disambiguate(centroids, sentences, layers.eval_sets[name], fallbacks.mfs,
                                            fallbacks.wordnet, progress)
        result.answered_by[name], result.metrics[name], result.keys[name], result.coverage[name] = dict(how), {}, {}, {}
        for view, predicted in predictions.items():
            order = [span.id for s in sentences for span in s.spans if span.id in predicted]
            result.keys[name][view] = [(i, predicted[i]) for i in order]
            for metric, value in score(gold, {i: {k} for i, k in predicted.items()}).items():
                result.metrics[name][f"{view}_{metric}"] = value
            answered = sum(1 for i in predicted if i in gold)
            result.coverage[name][view] = [answered, len(gold)]
            result.metrics[name][f"{view}_coverage"] = 100.0 * answered / len(gold) if gold else 0.0
    return result
