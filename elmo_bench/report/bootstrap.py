"""Paired bootstrap p-values for "+ELMo is better than the baseline" on one test set.

Examples are resampled with replacement (the same resample for both systems, so the test is paired); the
statistic is the difference of the test metric, +ELMo minus baseline, each averaged over that system's seeds.
The p-value is one-sided, after Berg-Kirkpatrick et al. (2012): the share of resamples whose difference exceeds
twice the observed one (the resampled differences shifted to mean zero under the null), with add-one smoothing.

The report bootstraps from the per-example sufficient statistics each run records (``scores_test.json.gz``,
elmo_bench.records.run_record; written by the engine with the task's own ``Task.statistics``): every resample's exact
corpus metric (accuracy, span F1, CoNLL F1) is a function of column sums (``paired_bootstrap_sums``). It reads
no gold data and no task code. ``paired_bootstrap`` (per-example scores) and ``paired_bootstrap_metric`` (any
metric function, recomputed per resample) are the general forms.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from elmo_bench.records.example_statistics import Statistics, aggregate
from elmo_bench.records.run_record import SCORES_FILE, predictions_path, read_statistics
from elmo_bench.report.significance import p_value as _p_value

#: compare_runs' reason when a run recorded neither statistics nor predictions: Table 1 leaves the p-value out
#: without a note
NO_STATISTICS = "no predictions"


def paired_bootstrap(scores_elmo: np.ndarray, scores_base: np.ndarray, samples: int = 1000,
                     seed: int = 0) -> tuple[float, float]:
    """Per-example scores (seeds, examples) for each system → (observed difference, p-value)."""
    elmo = np.atleast_2d(np.asarray(scores_elmo, dtype=np.float64)).mean(axis=0)   # (examples,)
    base = np.atleast_2d(np.asarray(scores_base, dtype=np.float64)).mean(axis=0)
    if elmo.shape != base.shape or elmo.size == 0:
        raise ValueError(f"paired bootstrap: need equal, non-empty example sets, got {elmo.shape} and {base.shape}")
    diff = elmo - base
    observed = float(diff.mean())
    rng = np.random.default_rng(seed)
    deltas = np.empty(samples)
    for start in range(0, samples, 256):                   # (chunk, examples) index blocks bound the memory
        stop = min(samples, start + 256)
        index = rng.integers(0, diff.size, size=(stop - start, diff.size))
        deltas[start:stop] = diff[index].mean(axis=1)
    return observed, _p_value(deltas, observed)


Metric = Callable[[Sequence[Any], Sequence[Any]], float]


def paired_bootstrap_metric(metric: Metric, preds_elmo: Sequence[Sequence[Any]], preds_base: Sequence[Sequence[Any]],
                            examples: Sequence[Any], samples: int = 200, seed: int = 0) -> tuple[float, float]:
    """Corpus-level metric(predictions, examples) recomputed on every resample.

    ``preds_elmo`` / ``preds_base`` hold one prediction list per seed, each aligned with ``examples``.
    """
    n = len(examples)
    if n == 0 or any(len(p) != n for p in [*preds_elmo, *preds_base]) or not preds_elmo or not preds_base:
        raise ValueError("paired bootstrap: every prediction list must have one prediction per example")

    def score(index: Sequence[int]) -> float:
        picked = [examples[i] for i in index]
        elmo = np.mean([metric([p[i] for i in index], picked) for p in preds_elmo])
        base = np.mean([metric([p[i] for i in index], picked) for p in preds_base])
        return float(elmo - base)

    observed = score(range(n))
    rng = np.random.default_rng(seed)
    deltas = np.array([score(rng.integers(0, n, size=n)) for _ in range(samples)])
    return observed, _p_value(deltas, observed)


def paired_bootstrap_sums(elmo: Sequence[Statistics], base: Sequence[Statistics], samples: int = 1000,
                          seed: int = 0) -> tuple[float, float]:
    """(observed difference, one-sided p) of mean-over-seeds metric, +ELMo minus baseline, resampling examples.

    Same test as ``paired_bootstrap``, with each resample's metric computed from column sums."""
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


# ---- the report's use: +ELMo vs baseline runs of one Table 1 row -------------------------------------------------

def run_statistics(run: Any, cache: dict[Path, Any]) -> tuple[Statistics | None, str]:
    """(the run's recorded test statistics, "") or (None, why not); read once per run directory."""
    run_dir = Path(run.path).parent
    if run_dir not in cache:
        try:
            stats = read_statistics(run_dir)
        except ValueError as exc:
            cache[run_dir] = (None, str(exc))
        else:
            if stats is not None:
                cache[run_dir] = (stats, "")
            elif predictions_path(run_dir, "test").exists() or predictions_path(run_dir, "test", True).exists():
                cache[run_dir] = (None, f"{run_dir} has test predictions but no {SCORES_FILE} (a run recorded "
                                        f"before the engine wrote it: elmo-bench migrate)")
            else:
                cache[run_dir] = (None, NO_STATISTICS)
    return cache[run_dir]


def compare_runs(elmo_runs: Sequence[Any], base_runs: Sequence[Any], samples: int = 1000,
                 cache: dict[Path, Any] | None = None) -> tuple[float | None, str]:
    """p-value of +ELMo > baseline over the test examples, or (None, why not). ``cache``: statistics already read,
    by run directory (one report shares it across tables)."""
    cache = {} if cache is None else cache
    if not elmo_runs or not base_runs:
        return None, NO_STATISTICS
    found = []
    for run in [*elmo_runs, *base_runs]:
        stats, why = run_statistics(run, cache)
        if stats is None:
            return None, why
        recorded = run.value("test")
        if recorded is None or abs(stats.value() - recorded) > 0.01:
            return None, f"recomputed test {run.main_metric} differs from {run.path}"
        found.append(stats)
    if len({s.rows.shape[0] for s in found}) != 1:
        return None, "runs were tested on different numbers of examples"
    _, p_value = paired_bootstrap_sums(found[: len(elmo_runs)], found[len(elmo_runs):], samples)
    return p_value, found[0].kind
