"""Probe ridge: read UD English-EWT (checked), accumulate each probed layer's moments over the training split
(batches of ``probe.batch_tokens`` tokens with ``probe.stream=true``, the gathered matrix with ``false``), solve
every ridge value in closed form (elmo_bench.probe.ridge.solve), score dev and test in the same batches, keep per layer
the ridge with the best dev accuracy (ties: the larger ridge), and name the best layer on test (a paired bootstrap
against the runner-up, elmo_bench.probe.lib.layer_choice).

Printed as ``probe=pos`` prints (``dev``/``test`` per ``layer_<k>`` and ``most_frequent_tag``, accuracy %), with
``ridge`` (each layer's chosen value), ``ridge_path`` (dev accuracy per value), ``best_layer``, ``stream`` and
``largest_batch`` (the most training tokens one update saw); results.json (task ``ridge_probe``):
``metrics.<split>.layer_<k>_accuracy`` and ``most_frequent_tag_accuracy``. A dev/test token whose tag never
occurs in training is counted wrong.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping, Sequence

import numpy as np

from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.lib.features import baseline_accuracy, layer_features
from elmo_bench.probe.lib.layer_choice import best_layer
from elmo_bench.probe.lib.streamed import Moments, token_batches
from elmo_bench.probe.lib.ud_data import SPLITS, read_tagged, tagged_data_block
from elmo_bench.probe.ridge.config import RidgeSettings
from elmo_bench.probe.ridge.solve import RidgeSolution, solve
from elmo_bench.probe.settings import UD_EWT

log = logging.getLogger(__name__)


def label_ids(examples: Sequence[dict[str, Any]], classes: Sequence[str]) -> np.ndarray:
    """Every token's class id in sentence order; −1 for a tag outside ``classes``."""
    index = {c: i for i, c in enumerate(classes)}
    return np.array([index.get(t, -1) for ex in examples for t in ex["tags"]], dtype=np.int64)


def batches(source: Any, count: int, positions: Sequence[int], settings: RidgeSettings):
    """(offset, (tokens, P, dim)) batches of a split: streamed, or the whole gathered matrix as one batch."""
    if settings.stream:
        yield from token_batches(source, count, positions, settings.batch_tokens)
        return
    yield 0, layer_features(source, count)[:, list(positions)]


def fit(source: Any, count: int, y: np.ndarray, positions: Sequence[int], dim: int, classes: int,
        settings: RidgeSettings) -> list[Moments]:
    """Each probed layer's training moments, in one pass over the split."""
    moments = [Moments(dim, classes) for _ in positions]
    for start, batch in batches(source, count, positions, settings):
        labels = y[start: start + len(batch)]
        for j, accumulator in enumerate(moments):
            accumulator.update(batch[:, j], labels)
    return moments


def correct(source: Any, count: int, y: np.ndarray, positions: Sequence[int], solutions: Sequence[RidgeSolution],
            settings: RidgeSettings) -> list[np.ndarray]:
    """Per probed layer, (tokens, ridge values) whether each token's prediction is its gold tag."""
    out = [np.zeros((len(y), len(s.ridges)), dtype=bool) for s in solutions]
    for start, batch in batches(source, count, positions, settings):
        gold = y[start: start + len(batch), None]
        for j, solution in enumerate(solutions):
            out[j][start: start + len(batch)] = solution.predict(batch[:, j]) == gold
    return out


def per_sentence(hits: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
    """Correct tokens per sentence from per-token hits."""
    ends = np.cumsum(lengths)
    total = np.concatenate([[0.0], np.cumsum(hits, dtype=np.float64)])
    return total[ends] - total[ends - np.asarray(lengths)]


def chosen(dev: np.ndarray, ridges: Sequence[float]) -> int:
    """The ridge index with the best dev accuracy; ties go to the larger ridge (the simpler map)."""
    return max(range(len(ridges)), key=lambda g: (float(dev[:, g].mean()), ridges[g]))



def run(context: ProbeContext) -> ProbeOutcome:
    """Probe ridge on ``context``'s encoder (see the module docstring)."""
    settings: RidgeSettings = context.settings
    read = read_tagged(context.data_dir(settings.data_dir, UD_EWT), settings.tags, settings.max_train_sentences)
    splits = read.splits
    classes = sorted({t for ex in splits["train"] for t in ex["tags"]})
    y = {s: label_ids(splits[s], classes) for s in SPLITS}
    probed = context.probed_layers(settings.layers)
    positions = [at for at, _ in probed]
    sources = {s: context.layers([ex["tokens"] for ex in splits[s]], f"ridge/{s}") for s in SPLITS}
    moments = fit(sources["train"], len(splits["train"]), y["train"], positions,
                  int(context.encoder_record["dim"]), len(classes), settings)
    solutions = [solve(m, settings.ridge_grid) for m in moments]
    hits = {s: correct(sources[s], len(splits[s]), y[s], positions, solutions, settings) for s in ("dev", "test")}
    rows = [f"layer_{k}" for _, k in probed]
    picks = {row: chosen(hits["dev"][j], settings.ridge_grid) for j, row in enumerate(rows)}
    accuracy = {s: {row: 100.0 * float(hits[s][j][:, picks[row]].mean()) for j, row in enumerate(rows)}
                for s in ("dev", "test")}
    baseline = {s: baseline_accuracy(splits["train"], splits[s]) for s in ("dev", "test")}
    lengths = [len(ex["tokens"]) for ex in splits["test"]]
    best = best_layer({row: per_sentence(hits["test"][j][:, picks[row]], lengths) for j, row in enumerate(rows)},
                      np.asarray(lengths))
    path = {row: {str(r): round(100.0 * float(hits["dev"][j][:, g].mean()), 2)
                  for g, r in enumerate(settings.ridge_grid)} for j, row in enumerate(rows)}
    printed = _printed(settings, splits, y, accuracy, baseline, picks, path, best, moments)
    metrics = {s: {**{f"{row}_accuracy": v for row, v in accuracy[s].items()},
                   "most_frequent_tag_accuracy": baseline[s]} for s in ("dev", "test")}
    data = tagged_data_block(read, settings.tags, settings.max_train_sentences)
    return ProbeOutcome(printed, metrics, f"{rows[0]}_accuracy", data, seed=0,
                        probes={row: {"ridge": settings.ridge_grid[picks[row]], "dev_path": path[row]}
                                for row in rows}, extra={"best_layer": best})


def _printed(settings: RidgeSettings, splits: Mapping[str, Any], y: Mapping[str, np.ndarray],
             accuracy: Mapping[str, Mapping[str, float]], baseline: Mapping[str, float], picks: Mapping[str, int],
             path: Mapping[str, Any], best: dict | None, moments: Sequence[Moments]) -> dict[str, Any]:
    """The printed object (accuracies to 2 decimals)."""
    return {"data": "ud_ewt_pos", "tag_column": settings.tags, "train_sentences": len(splits["train"]),
            **{f"{s}_tokens": int(len(y[s])) for s in SPLITS},
            **{s: {**{row: round(v, 2) for row, v in accuracy[s].items()},
                   "most_frequent_tag": round(baseline[s], 2)} for s in ("test", "dev")},
            "ridge": {row: settings.ridge_grid[g] for row, g in picks.items()}, "ridge_path": dict(path),
            "best_layer": best, "stream": settings.stream,
            "largest_batch": max(m.largest_batch for m in moments)}
