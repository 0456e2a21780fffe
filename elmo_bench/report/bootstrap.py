"""Paired bootstrap p-values for "+ELMo is better than the baseline" on one test set.

Examples are resampled with replacement (the same resample for both systems, so the test is paired); the
statistic is the difference of the test metric, +ELMo minus baseline, each averaged over that system's seeds.
The p-value is one-sided, after Berg-Kirkpatrick et al. (2012): the share of resamples whose difference exceeds
twice the observed one (the resampled differences shifted to mean zero under the null), with add-one smoothing.

Two ways to get the metric of a resample:
- ``per_example``: metrics that are a mean over examples (accuracy, SQuAD EM/F1 per question) are scored once
  per example and resampled as numbers: fast.
- ``recompute``: corpus-level metrics (span F1 of NER and SRL, CoNLL coreference F1) are recomputed on each
  resample with the task's own metric function (``Task.metric``) from the task registry: exact but slower.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

import numpy as np

log = logging.getLogger(__name__)

#: (task, metric) pairs whose value is the mean of one score per example; "*" matches any task
PER_EXAMPLE = {("*", "accuracy"), ("squad", "f1"), ("squad", "exact_match"), ("squad", "em")}


def is_per_example(task: str, metric: str) -> bool:
    return ("*", metric) in PER_EXAMPLE or (task, metric) in PER_EXAMPLE


def _p_value(deltas: np.ndarray, observed: float) -> float:
    """One-sided: share of resampled differences at least 2 x observed (add-one smoothed)."""
    if observed <= 0:
        return 1.0
    return float((1 + np.sum(deltas >= 2 * observed)) / (len(deltas) + 1))


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


# ---- the report's use: +ELMo vs baseline runs of one Table 1 row -------------------------------------------------

def _predictions(run_dir: Any) -> tuple[list[Any], list[Any]] | None:
    import json
    from pathlib import Path

    path = Path(run_dir) / "predictions_test.json"
    if not path.exists():
        return None
    records = json.loads(path.read_text(encoding="utf-8"))
    return [r["id"] for r in records], [r["prediction"] for r in records]


def _gold(run: Any, cache: dict[str, Any]) -> tuple[Any, list[Any]]:
    """(task instance, test examples) read with the run's own data config; cached per (task, data)."""
    import json

    from elmo_bench.experiment import load_task
    from tasks import TASKS

    data_cfg = dict((run.raw.get("config") or {}).get("data") or {})
    data_cfg.update({"train": None, "dev": None, "dev_from_train": None})  # only the test split is needed
    data_cfg["hub_splits"] = {**(data_cfg.get("hub_splits") or {}), "train": None, "dev": None}  # hub / disk too
    key = json.dumps([run.task, data_cfg], sort_keys=True, default=str)
    if key not in cache:
        if run.task not in TASKS:
            raise ValueError(f"task {run.task!r} is not in the task registry")
        task = load_task(TASKS[run.task])
        splits = task.read(data_cfg)
        if "test" not in splits:
            raise ValueError("the data config has no test split")
        cache[key] = (task, splits["test"])
    return cache[key]


def compare_runs(elmo_runs: Sequence[Any], base_runs: Sequence[Any], samples: int = 1000,
                 recompute_samples: int = 200, cache: dict[str, Any] | None = None) -> tuple[float | None, str]:
    """p-value of +ELMo > baseline from the runs' predictions_test.json, or (None, why not)."""
    cache = {} if cache is None else cache
    loaded = [_predictions(r.path.parent) for r in [*elmo_runs, *base_runs]]
    if not elmo_runs or not base_runs or any(p is None for p in loaded):
        return None, "no predictions"
    ids = loaded[0][0]
    if any(p[0] != ids for p in loaded):
        return None, "prediction ids differ between runs"
    run = elmo_runs[0]
    try:
        task, examples = _gold(run, cache)
    except Exception as exc:                                  # data absent, hub offline, reader error, ...
        return None, f"test gold not readable ({exc.__class__.__name__}: {exc})"
    gold_ids = [e.get("id", i) for i, e in enumerate(examples)]
    if [str(i) for i in gold_ids] != [str(i) for i in ids]:
        return None, "prediction ids do not match the test set"
    main = run.main_metric

    def metric(predictions: Sequence[Any], picked: Sequence[Any]) -> float:
        return float(task.metric(list(predictions), list(picked))[main])

    preds = [p[1] for p in loaded]
    try:
        for r, p in zip([*elmo_runs, *base_runs], preds):   # the recomputed metric must be the recorded one
            recorded = r.value("test")
            if recorded is None or abs(metric(p, examples) - recorded) > 0.01:
                return None, f"recomputed test {main} differs from {r.path}"
        n_elmo = len(elmo_runs)
        if is_per_example(run.task, main):
            scores = np.array([[metric([p[i]], [examples[i]]) for i in range(len(examples))] for p in preds])
            _, p_value = paired_bootstrap(scores[:n_elmo], scores[n_elmo:], samples)
            return p_value, "per-example"
        _, p_value = paired_bootstrap_metric(metric, preds[:n_elmo], preds[n_elmo:], examples, recompute_samples)
        return p_value, "recomputed"
    except Exception as exc:
        log.warning("bootstrap failed for %s: %s", run.task, exc)
        return None, f"metric failed ({exc.__class__.__name__})"
