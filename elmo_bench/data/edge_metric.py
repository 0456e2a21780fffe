"""Edge-probing scores, torch-free: F1 over (target, label) decisions, as jiant v1 and the papers report them.

Each target is scored as one binary decision per label (predicted when its sigmoid is >= 0.5). Over a set of
targets: correct = labels both predicted and gold, excess = predicted but not gold, missed = gold but not predicted;
F1 = 2c / (2c + e + m) in percent, summed over every target first (micro-averaged). Three views of it:

* ``micro``: every label (POS, chunks, dependencies, entities);
* ``positive``: the positive label ``"1"`` only (coreference: "same entity"; the negative label's decisions are the
  complement, and counting them would reward saying "different" to the many unrelated pairs);
* ``srl_roles``: core roles (A0-A5, AA) and adjuncts (AM-*) only, leaving out references (R-*), continuations (C-*) and
  anything else, as the papers' SRL numbers do.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

#: one target's labels: predicted (at threshold 0.5) or gold
LabelSet = Iterable[str]
_SRL_CORE = re.compile(r"^(A[0-5]|AA)$")
POSITIVE = "1"


def srl_scored(label: str) -> bool:
    """True for the roles SRL edge probing scores: A0-A5, AA and every AM-* adjunct."""
    return bool(_SRL_CORE.match(label)) or label.startswith("AM-")


def positive_only(label: str) -> bool:
    return label == POSITIVE


def every_label(label: str) -> bool:
    return True


#: metric kind → which labels count
KEEP: dict[str, Callable[[str], bool]] = {"micro": every_label, "positive": positive_only, "srl_roles": srl_scored}


def counts(predicted: Sequence[LabelSet], gold: Sequence[LabelSet],
           keep: Callable[[str], bool] = every_label) -> list[int]:
    """[correct, excess, missed] label decisions over aligned targets (one label set each)."""
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predicted targets for {len(gold)} gold targets")
    correct = excess = missed = 0
    for pred, true in zip(predicted, gold):
        p = {x for x in pred if keep(x)}
        g = {x for x in true if keep(x)}
        correct += len(p & g)
        excess += len(p - g)
        missed += len(g - p)
    return [correct, excess, missed]


def f1(correct: float, excess: float, missed: float) -> float:
    """F1 in percent from decision counts (0 when nothing was predicted nor gold)."""
    denominator = 2 * correct + excess + missed
    return 100.0 * 2 * correct / denominator if denominator else 0.0


def micro_f1(predicted: Sequence[LabelSet], gold: Sequence[LabelSet], kind: str = "micro") -> float:
    """Micro-F1 in percent over every (target, label) decision the metric ``kind`` keeps (see KEEP)."""
    return f1(*counts(predicted, gold, KEEP[kind]))


def per_label_f1(predicted: Sequence[LabelSet], gold: Sequence[LabelSet]) -> dict[str, float]:
    """F1 in percent of each label seen in the gold or the predictions (sorted by label)."""
    labels = sorted({x for group in (predicted, gold) for labels in group for x in labels})
    return {label: f1(*counts(predicted, gold, lambda x, label=label: x == label)) for label in labels}
