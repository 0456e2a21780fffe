"""What the six edge-probing tasks share beyond their readers, torch-free: labels, decoding of the head's sigmoids,
the metric, the per-example statistics and the saved state. Each task (tasks/edge_<name>/task.py) mixes this into
its Task with its ``name``, ``two_spans``, ``metric_kind`` and reader; the head and the gold tensors are
elmo_bench.modules.edge_head's.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from elmo_bench.data.edge_metric import KEEP, counts, f1, micro_f1, per_label_f1

THRESHOLD = 0.5


class EdgeTaskLogic:
    """Mixin for an edge task: set ``two_spans`` (targets are span pairs) and ``metric_kind`` (micro | positive |
    srl_roles, elmo_bench.data.edge_metric)."""

    text_fields = ("tokens",)
    main_metric = "f1"
    statistics_kind = "srl_f1"  # rows [correct, excess, missed]: F1 = 2c / (2c + e + m), the same aggregate
    two_spans: bool = False
    metric_kind: str = "micro"

    def __init__(self) -> None:
        self.labels: list[str] = []

    def fit_labels(self, splits: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        """Every label of the gold of any split, sorted (stable across runs; one seen only in dev or test keeps a
        column whose F1 is 0, the honest score)."""
        self.labels = sorted({label for examples in splits.values() for ex in examples
                              for target in ex["targets"] for label in target["labels"]})

    def decode_probabilities(self, probabilities: Sequence[Sequence[Sequence[float]]],
                             examples: Sequence[Mapping[str, Any]]) -> list[list[list[str]]]:
        """Per example, per target, the labels whose sigmoid is >= 0.5 (``probabilities``: (batch, targets,
        labels) nested lists, padded past each example's targets)."""
        out = []
        for rows, ex in zip(probabilities, examples):
            out.append([[self.labels[j] for j, p in enumerate(row) if p >= THRESHOLD]
                        for row in rows[: len(ex["targets"])]])
        return out

    def metric(self, predictions: Sequence[Sequence[Sequence[str]]],
               examples: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        """``f1``: the task's score (metric_kind); ``micro_f1``: every label; ``f1[<label>]``: each label's F1."""
        predicted = [labels for p in predictions for labels in p]
        gold = [target["labels"] for ex in examples for target in ex["targets"]]
        out = {"f1": micro_f1(predicted, gold, self.metric_kind), "micro_f1": micro_f1(predicted, gold)}
        out.update({f"f1[{label}]": value for label, value in per_label_f1(predicted, gold).items()})
        return out

    def statistics(self, predictions: Sequence[Sequence[Sequence[str]]],
                   examples: Sequence[Mapping[str, Any]]) -> list[list[float]]:
        """[correct, excess, missed] kept label decisions per sentence: their sums give ``metric``'s ``f1``."""
        keep = KEEP[self.metric_kind]
        return [[float(x) for x in counts(p, [t["labels"] for t in ex["targets"]], keep)]
                for p, ex in zip(predictions, examples, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        return {"labels": list(self.labels)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.labels = list(state["labels"])


def score_of(rows: Sequence[Sequence[float]]) -> float:
    """F1 in percent from summed statistics rows (what the report's bootstrap computes)."""
    return f1(*(sum(column) for column in zip(*rows))) if rows else 0.0
