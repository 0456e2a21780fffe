"""Per-example sufficient statistics of a test metric: enough to recompute it on any resample without the data.

Every metric the report bootstraps is a function of column sums of one small row per example:

- ``ratio`` (accuracy, SQuAD F1 / EM, POS accuracy): row [score, weight]; metric = 100 x sum(score) / sum(weight)
  (an SST phrase that is not a root has weight 0: the metric counts roots only);
- ``chunk_f1`` (NER, conlleval): row [correct, guessed, gold] chunks of the sentence;
- ``srl_f1`` (srl-eval): row [correct, excess, missed] arguments of the proposition;
- ``conll_f1`` (coreference): the document's (recall num, recall den, precision num, precision den) for MUC,
  B-cubed and CEAF-e (the reference scorer sums these over documents), metric = mean of the three F1s.

``elmo-bench export-results`` stores the rows (``scores_test.json.gz``, row i = test example i) so that the
report's paired bootstrap needs neither the gold data nor the predictions' text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np


@dataclass
class Statistics:
    """rows (examples, columns) float64 for one run's test predictions; ``kind`` names the aggregate."""

    kind: str
    metric: str
    rows: np.ndarray

    def value(self) -> float:
        return float(aggregate(self.kind, self.rows.sum(axis=0)[None, :])[0])


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


# ---- per task: (predictions, examples) → rows ---------------------------------------------------------------

def _accuracy(gold_key: str, roots_only: bool = False) -> Callable[[Sequence[Any], Sequence[Any]], list[list[float]]]:
    def rows(predictions: Sequence[Any], examples: Sequence[Any]) -> list[list[float]]:
        out = []
        for p, ex in zip(predictions, examples, strict=True):
            weight = 0.0 if roots_only and not ex.get("is_root", True) else 1.0
            out.append([weight * float(p == ex[gold_key]), weight])
        return out
    return rows


def _squad(metric: str) -> Callable[[Sequence[Any], Sequence[Any]], list[list[float]]]:
    def rows(predictions: Sequence[Any], examples: Sequence[Any]) -> list[list[float]]:
        from elmo_bench.tasks.squad.metric import exact_match_score, f1_score, metric_max_over_ground_truths

        fn = f1_score if metric == "f1" else exact_match_score
        return [[float(metric_max_over_ground_truths(fn, p, ex["answers"])), 1.0]
                for p, ex in zip(predictions, examples, strict=True)]
    return rows


def _ner(predictions: Sequence[Any], examples: Sequence[Any]) -> list[list[float]]:
    from elmo_bench.tasks.ner.metric import count_chunks, sentence_rows

    out = []
    for p, ex in zip(predictions, examples, strict=True):
        c = count_chunks(sentence_rows([ex["tags"]], [p]))
        out.append([float(c.correct_chunks), float(c.guessed_chunks), float(c.gold_chunks)])
    return out


def _srl(predictions: Sequence[Any], examples: Sequence[Any]) -> list[list[float]]:
    from elmo_bench.tasks.srl.metric import score_bio

    out = []
    for p, ex in zip(predictions, examples, strict=True):
        res = score_bio([ex["tags"]], [p])
        out.append([float(res["correct"]), float(res["excess"]), float(res["missed"])])
    return out


def _coref(predictions: Sequence[Any], examples: Sequence[Any]) -> list[list[float]]:
    from elmo_bench.tasks.coref.metric import _ids, bcubed, ceafe, muc

    out = []
    for p, ex in zip(predictions, examples, strict=True):
        k, r = _ids(ex["clusters"], [[tuple(m) for m in cluster] for cluster in p])
        out.append([float(v) for fn in (muc, bcubed, ceafe) for v in fn(k, r)])
    return out


def _pos(predictions: Sequence[Any], examples: Sequence[Any]) -> list[list[float]]:
    return [[float(sum(a == b for a, b in zip(p, ex["tags"]))), float(len(ex["tags"]))]
            for p, ex in zip(predictions, examples, strict=True)]


#: (task, main metric) → (kind, row function)
EXTRACTORS: dict[tuple[str, str], tuple[str, Callable[[Sequence[Any], Sequence[Any]], list[list[float]]]]] = {
    ("sst", "accuracy"): ("ratio", _accuracy("label", roots_only=True)),
    ("snli", "accuracy"): ("ratio", _accuracy("label")),
    ("squad", "f1"): ("ratio", _squad("f1")),
    ("squad", "exact_match"): ("ratio", _squad("exact_match")),
    ("ner", "f1"): ("chunk_f1", _ner),
    ("srl", "f1"): ("srl_f1", _srl),
    ("coref", "conll_f1"): ("conll_f1", _coref),
    ("pos", "accuracy"): ("ratio", _pos),
}


def compute(task: str, metric: str, predictions: Sequence[Any], examples: Sequence[Any]) -> Statistics | None:
    """The rows of one run's test predictions against the gold examples; None for a metric not listed above."""
    found = EXTRACTORS.get((task, metric))
    if found is None:
        return None
    kind, fn = found
    rows = np.asarray(fn(predictions, examples), dtype=np.float64).reshape(len(examples), -1)
    return Statistics(kind, metric, rows)


def paired_bootstrap_sums(elmo: Sequence[Statistics], base: Sequence[Statistics], samples: int = 1000,
                          seed: int = 0) -> tuple[float, float]:
    """(observed difference, one-sided p) of mean-over-seeds metric, +ELMo minus baseline, resampling examples.

    Same test as ``bootstrap.paired_bootstrap`` (Berg-Kirkpatrick et al. 2012: share of resampled differences at
    least twice the observed one, add-one smoothed), with each resample's metric computed from column sums."""
    from elmo_bench.report.bootstrap import _p_value

    runs = [*elmo, *base]
    n = runs[0].rows.shape[0]
    if n == 0 or any(r.rows.shape[0] != n or r.kind != runs[0].kind for r in runs):
        raise ValueError("paired bootstrap: every run needs statistics of the same kind for the same examples")
    stacked = np.stack([r.rows for r in runs])                       # (runs, examples, columns)
    kind, k = runs[0].kind, len(elmo)

    def difference(weights: np.ndarray) -> np.ndarray:
        """weights (resamples, examples) → (resamples,) mean +ELMo metric minus mean baseline metric."""
        sums = np.einsum("se,rec->src", weights, stacked)          # (resamples, runs, columns)
        values = aggregate(kind, sums)                               # (resamples, runs)
        return values[:, :k].mean(axis=1) - values[:, k:].mean(axis=1)

    observed = float(difference(np.ones((1, n)))[0])
    rng = np.random.default_rng(seed)
    deltas = np.empty(samples)
    for start in range(0, samples, 128):
        stop = min(samples, start + 128)
        index = rng.integers(0, n, size=(stop - start, n))
        weights = np.zeros((stop - start, n))
        np.add.at(weights, (np.arange(stop - start)[:, None], index), 1.0)
        deltas[start:stop] = difference(weights)
    return observed, _p_value(deltas, observed)
