"""Paired bootstrap p-values for "+ELMo is better than the baseline" on one test set.

Examples are resampled with replacement (the same resample for both systems, so the test is paired); the
statistic is the difference of the test metric, +ELMo minus baseline, each averaged over that system's seeds.
The p-value is one-sided, after Berg-Kirkpatrick et al. (2012): the share of resamples whose difference exceeds
twice the observed one (the resampled differences shifted to mean zero under the null), with add-one smoothing.

The report bootstraps from per-example sufficient statistics (``elmo_bench.report.statistics``): every resample's
exact corpus metric (accuracy, span F1, CoNLL F1) is a function of column sums. ``paired_bootstrap`` (per-example
scores) and ``paired_bootstrap_metric`` (any metric function, recomputed per resample) are the general forms.
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
# Each run's test predictions become per-example sufficient statistics (elmo_bench.report.statistics): read from
# the compact export's scores_test.json.gz when present, else computed from predictions_test.json(.gz) and the gold
# test set. The bootstrap then recomputes the exact corpus metric of every resample from column sums, so a report
# built from a compact tree (no data) and one built from the full results (with data) give the same p-values.

SCORES_FILE = "scores_test.json.gz"


def _read_json(path: Any) -> Any:
    import gzip
    import json
    from pathlib import Path

    path = Path(path)
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return json.load(handle)
    return json.loads(path.read_text(encoding="utf-8"))


def read_predictions(run_dir: Any) -> list[Any] | None:
    """The test predictions in example order, from predictions_test.json (engine: [{"id", "prediction"}]) or the
    compact predictions_test.json.gz ([{"index", "prediction"}]); None when neither exists."""
    from pathlib import Path

    for name in ("predictions_test.json", "predictions_test.json.gz"):
        path = Path(run_dir) / name
        if path.exists():
            records = _read_json(path)
            if records and "index" in records[0]:
                records = sorted(records, key=lambda r: r["index"])
                if [r["index"] for r in records] != list(range(len(records))):
                    raise ValueError(f"{path}: indices are not 0..n-1")
            return [r["prediction"] for r in records]
    return None


def read_statistics(run_dir: Any) -> Any:
    """The compact export's per-example statistics of a run, or None."""
    from pathlib import Path

    from elmo_bench.report.statistics import Statistics

    path = Path(run_dir) / SCORES_FILE
    if not path.exists():
        return None
    data = _read_json(path)
    return Statistics(data["kind"], data["metric"], np.asarray(data["rows"], dtype=np.float64).reshape(
        len(data["rows"]), -1))


def _gold(run: Any, cache: dict[str, Any]) -> tuple[Any, list[Any]]:
    """(task instance, test examples) read with the run's own data config; cached per (task, data)."""
    import json

    from elmo_bench.engine.experiment import load_task
    from elmo_bench.tasks import TASKS

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


def run_statistics(run: Any, cache: dict[str, Any]) -> tuple[Any, str]:
    """(Statistics, "") of one run's test predictions, or (None, why not)."""
    from elmo_bench.report import statistics

    stats = read_statistics(run.path.parent)
    if stats is not None:
        return stats, ""
    try:
        predictions = read_predictions(run.path.parent)
    except (ValueError, KeyError, OSError) as exc:
        return None, f"unreadable predictions ({exc})"
    if predictions is None:
        return None, "no predictions"
    if (run.task, run.main_metric) not in statistics.EXTRACTORS:
        return None, f"no per-example statistics for {run.task} {run.main_metric}"
    try:
        _, examples = _gold(run, cache)
    except Exception as exc:                                  # data absent, hub offline, reader error, ...
        return None, f"test gold not readable ({exc.__class__.__name__}: {exc})"
    if len(predictions) != len(examples):
        return None, f"{len(predictions)} predictions for {len(examples)} test examples"
    try:
        return statistics.compute(run.task, run.main_metric, predictions, examples), ""
    except Exception as exc:
        log.warning("statistics failed for %s: %s", run.path, exc)
        return None, f"metric failed ({exc.__class__.__name__})"


def compare_runs(elmo_runs: Sequence[Any], base_runs: Sequence[Any], samples: int = 1000,
                 cache: dict[str, Any] | None = None) -> tuple[float | None, str]:
    """p-value of +ELMo > baseline over the test examples, or (None, why not)."""
    from elmo_bench.report.statistics import paired_bootstrap_sums

    cache = {} if cache is None else cache
    if not elmo_runs or not base_runs:
        return None, "no predictions"
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
