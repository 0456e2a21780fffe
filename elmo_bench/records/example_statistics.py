"""Per-example sufficient statistics of a test metric: enough to recompute it on any resample without the data.

Each task (``Task.statistics``, elmo_bench.tasks.api) turns its predictions into one small row per example; the
metric is a function of the rows' column sums, named by the task's ``statistics_kind``:

- ``ratio`` (accuracy, SQuAD F1 / EM, POS accuracy): row [score, weight]; metric = 100 x sum(score) / sum(weight)
  (an SST phrase that is not a root has weight 0: the metric counts roots only);
- ``chunk_f1`` (NER, conlleval): row [correct, guessed, gold] chunks of the sentence;
- ``srl_f1`` (srl-eval): row [correct, excess, missed] arguments of the proposition;
- ``conll_f1`` (coreference): the document's (recall num, recall den, precision num, precision den) for MUC,
  B-cubed and CEAF-e (the reference scorer sums these over documents), metric = mean of the three F1s.

The engine writes a run's test rows into its run directory (elmo_bench.records.run_record), so the report's paired
bootstrap needs neither the tasks' code, the gold data nor the predictions' text. Base layer: numpy only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

#: the aggregates a task's ``statistics_kind`` may name
KINDS = ("ratio", "chunk_f1", "srl_f1", "conll_f1")


@dataclass
class Statistics:
    """rows (examples, columns) float64 for one run's test predictions; ``kind`` names the aggregate."""

    kind: str
    metric: str
    rows: np.ndarray

    def value(self) -> float:
        """The corpus metric in percent: the aggregate of all rows' column sums."""
        return float(aggregate(self.kind, self.rows.sum(axis=0)[None, :])[0])

    @classmethod
    def of(cls, kind: str, metric: str, rows: Sequence[Sequence[float]], examples: int) -> "Statistics":
        """Rows as a task returns them (one list per example) → (examples, columns) float64; ValueError on an
        unknown kind or a row count other than ``examples``."""
        if kind not in KINDS:
            raise ValueError(f"unknown statistics kind {kind!r}; expected one of {list(KINDS)}")
        array = np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)
        if array.shape[0] != examples:
            raise ValueError(f"{array.shape[0]} statistics rows for {examples} examples")
        return cls(kind, metric, array)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "metric": self.metric, "rows": self.rows.tolist()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Statistics":
        return cls(data["kind"], data["metric"], np.asarray(data["rows"], dtype=np.float64).reshape(
            len(data["rows"]), -1))


def _f1(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1.0), 0.0)


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def aggregate(kind: str, sums: np.ndarray) -> np.ndarray:
    """Column sums (..., columns) → the metric in percent (...)."""
    if kind == "ratio":
        return 100.0 * _div(sums[..., 0], sums[..., 1])
    if kind == "chunk_f1":
        correct, guessed, gold = sums[..., 0], sums[..., 1], sums[..., 2]
        return 100.0 * _f1(_div(correct, guessed), _div(correct, gold))
    if kind == "srl_f1":
        ok, excess, missed = sums[..., 0], sums[..., 1], sums[..., 2]
        return 100.0 * _f1(_div(ok, ok + excess), _div(ok, ok + missed))
    if kind == "conll_f1":
        f1s = [_f1(_div(sums[..., i + 2], sums[..., i + 3]), _div(sums[..., i], sums[..., i + 1]))
               for i in (0, 4, 8)]
        return 100.0 * (f1s[0] + f1s[1] + f1s[2]) / 3.0
    raise ValueError(f"unknown statistics kind {kind!r}")
