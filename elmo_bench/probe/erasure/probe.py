"""Probe erasure: per layer k, a LEACE eraser fitted on the training split (``LeaceFitter(d, k, method="leace",
dtype=float64, svd_tol, constrain_cov_trace=False)`` on one-hot labels of the k training classes: integer labels
in one column would give a rank-1 eraser without an error, and the default svd_tol 0.01 drops rare classes), saved
with its identity under ``erasers/layer_<k>.pt``, and scored: the converged linear probe (fixed L2) fitted and
scored before and after erasure on test tokens whose label occurs in training. ``probe.stream=true`` feeds
``LeaceFitter.update`` batch by batch (elmo_bench.probe.lib.streamed.token_batches) instead of once with every training
token, and the scoring probe reads one layer's matrix at a time instead of every layer's: the same erasers and
numbers to rounding.

Printed and recorded (task ``erasure_probe``): ``metrics.test.majority`` (the training-majority class's test share,
%), ``prior_bits`` (the test labels' cross-entropy under the training label distribution), and per layer
``layer_<k>_accuracy_before/after`` (%), ``layer_<k>_bits_before/after`` and ``layer_<k>_rank`` (must be k − 1).
"""
from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any, Iterator

import numpy as np
import torch
from concept_erasure import LeaceFitter

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.kinds import kind_of
from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.erasure.config import ErasureSettings
from elmo_bench.probe.lib import bits as cp
from elmo_bench.probe.lib.labelled import Labelled, features, labelled, read
from elmo_bench.probe.lib.linear import Standardiser
from elmo_bench.probe.lib.progress import Steps
from elmo_bench.probe.lib.streamed import layer_matrix, token_batches

log = logging.getLogger(__name__)
#: the package's settings every eraser is fitted with (recorded beside it)
LEACE = {"method": "leace", "dtype": "float64", "constrain_cov_trace": False}


def fitter(dim: int, classes: int, svd_tol: float) -> LeaceFitter:
    """The LEACE fitter with the recorded settings (``LEACE``)."""
    return LeaceFitter(dim, classes, method="leace", dtype=torch.float64, svd_tol=svd_tol, constrain_cov_trace=False)


def one_hot(y: torch.Tensor, classes: int) -> torch.Tensor:
    """Label ids (n,) → (n, classes) float64: one column per class (never one integer column: a rank-1 eraser)."""
    return torch.nn.functional.one_hot(y, classes).to(torch.float64)


def fit_eraser(x: torch.Tensor, y: torch.Tensor, classes: int, svd_tol: float) -> Any:
    """The LEACE eraser of one-hot ``y`` (n,) from ``x`` (n, d) float64, in one update."""
    fitted = fitter(x.shape[1], classes, svd_tol)
    fitted.update(x, one_hot(y, classes))
    return fitted.eraser


def streamed_erasers(source: Any, count: int, y: np.ndarray, positions: list[int], dim: int, classes: int,
                     settings: ErasureSettings) -> list[Any]:
    """Each probed layer's eraser from ``LeaceFitter.update`` over batches of at most ``probe.batch_tokens`` training
    tokens (one pass over the split for every layer; no layer's (tokens, dim) matrix is built)."""
    fitters = [fitter(dim, classes, settings.svd_tol) for _ in positions]
    for start, batch in token_batches(source, count, positions, settings.batch_tokens):
        labels = one_hot(torch.from_numpy(y[start: start + len(batch)]), classes)
        for j, fitted in enumerate(fitters):
            fitted.update(torch.from_numpy(np.ascontiguousarray(batch[:, j])), labels)
    return [fitted.eraser for fitted in fitters]


def change_rank(eraser: Any) -> int:
    """The rank of x ↦ eraser(x) − x (the erased subspace's dimension)."""
    return int(torch.linalg.matrix_rank(eraser.proj_left @ eraser.proj_right))


def scored(x: dict[str, torch.Tensor], data: Labelled, seen: np.ndarray, settings: ErasureSettings
           ) -> tuple[float, float]:
    """(accuracy %, bits per token) on the seen test tokens of the linear probe fitted on ``x["train"]``."""
    scale = Standardiser.fit(x["train"])
    probe = cp.fit_lookup_softmax(scale(x["train"]), None, torch.from_numpy(data.y["train"]), len(data.classes), 1,
                                  settings.l2, settings.max_iter, settings.tol)
    test = scale(x["test"])[torch.from_numpy(seen)]
    gold = torch.from_numpy(data.y["test"][seen])
    return 100.0 * float((probe.predict(test, None) == gold).double().mean()), float(probe.bits(test, None, gold).mean())


def saved_eraser(eraser: Any, train: torch.Tensor) -> dict[str, Any]:
    """An eraser as saved: LEACE's matrices and mean, and the training features' covariance (the in-model random
    control keeps the eraser's whitening, elmo_bench.encoders.erasing)."""
    return {"proj_left": eraser.proj_left, "proj_right": eraser.proj_right, "bias": eraser.bias,
            "sigma": torch.cov(train.T.to(torch.float64))}


def bilm_streams(k: int, train: torch.Tensor, data: Labelled, settings: ErasureSettings) -> list[dict[str, Any]]:
    """The biLM's in-model erasers of layer k, one per stream so that no stream receives the other's information:
    the token layer (k = 0, ``[x; x]``) on x alone, an LSTM layer on its forward and its backward half apart."""
    half = train.shape[1] // 2
    parts = [train[:, :half]] if k == 0 else [train[:, :half], train[:, half:]]
    y = torch.from_numpy(data.y["train"])
    return [saved_eraser(fit_eraser(part, y, len(data.classes), settings.svd_tol), part) for part in parts]


def erase_layer(k: int, x: dict[str, torch.Tensor], eraser: Any, data: Labelled, seen: np.ndarray,
                settings: ErasureSettings, context: ProbeContext, steps: Steps) -> dict[str, float]:
    """Layer k's eraser (saved with its identity) and its scores before and after on ``x`` (train and test, (n, d)
    float64); ConfigError when the change's rank is below k − 1 (a class the eraser could not separate). One of
    ``steps``."""
    classes = len(data.classes)
    rank = change_rank(eraser)
    if rank != classes - 1:
        raise ConfigError(f"probe erasure: layer {k}'s eraser has rank {rank}, expected {classes - 1} for the "
                          f"{classes} classes {data.classes} (a class whose mean the layer cannot separate)")
    steps.now(f"layer {k}: the linear probe before erasure")
    before = scored(x, data, seen, settings)
    steps.now(f"layer {k}: the linear probe after erasure")
    after = scored({s: eraser(v) for s, v in x.items()}, data, seen, settings)
    identity = {"encoder": context.encoder_record["hash"], "layer": k, "concept": settings.tags,
                "classes": data.classes, "train_tokens": int(len(data.y["train"])), "settings": asdict(settings),
                "leace": {**LEACE, "svd_tol": settings.svd_tol}}
    target = context.run_dir / "erasers" / f"layer_{k}.pt"
    target.parent.mkdir(parents=True, exist_ok=True)
    erasure = kind_of(context.encoder_record["encoder"]).erasure
    streams = bilm_streams(k, x["train"], data, settings) if erasure is not None and erasure.per_stream else None
    torch.save({"identity": identity, **saved_eraser(eraser, x["train"]),
                **({"streams": streams} if streams is not None else {})}, target)
    steps.advance()
    return {"accuracy_before": before[0], "accuracy_after": after[0], "bits_before": before[1],
            "bits_after": after[1], "rank": rank}


def layer_erasers(context: ProbeContext, splits: dict[str, list[dict[str, Any]]], data: Labelled,
                  settings: ErasureSettings, steps: Steps) -> Iterator[tuple[int, dict[str, torch.Tensor], Any]]:
    """(index in the model, {train, test} (n, d) float64, eraser) per probed layer: erasers from streamed batches
    and one layer's matrices at a time (``probe.stream=true``, the pass over the training split one of ``steps``),
    or every layer gathered and one update each."""
    probed = context.probed_layers(settings.layers)
    classes = len(data.classes)
    if not settings.stream:
        layers = features(context, splits)
        for at, k in probed:
            steps.now(f"layer {k}: fitting its eraser")
            x = {s: torch.from_numpy(np.ascontiguousarray(layers[s][:, at], dtype=np.float64))
                 for s in ("train", "test")}
            yield k, x, fit_eraser(x["train"], torch.from_numpy(data.y["train"]), classes, settings.svd_tol)
        return
    sources = {s: context.layers([ex["tokens"] for ex in splits[s]], f"ud_ewt/{s}") for s in ("train", "test")}
    steps.now("every layer's eraser (one streamed pass over the training split)")
    erasers = streamed_erasers(sources["train"], len(splits["train"]), data.y["train"], [at for at, _ in probed],
                               int(context.encoder_record["dim"]), classes, settings)
    steps.advance()
    for (at, k), eraser in zip(probed, erasers):
        steps.now(f"layer {k}: reading its matrices")
        yield k, {s: torch.from_numpy(layer_matrix(sources[s], len(splits[s]), at)) for s in ("train", "test")}, eraser


def run(context: ProbeContext) -> ProbeOutcome:
    """Probe erasure on ``context``'s encoder (see the module docstring)."""
    settings: ErasureSettings = context.settings
    read_ = read(context, settings)
    data = labelled(read_.splits)
    seen = data.y["test"] >= 0
    counts = np.bincount(data.y["train"], minlength=len(data.classes))
    majority = 100.0 * float((data.y["test"][seen] == counts.argmax()).mean())
    prior = float(cp.constant_bits(data.y["train"], data.y["test"][seen], len(data.classes)).mean())
    total = len(context.probed_layers(settings.layers)) + int(settings.stream)
    with Steps(total, "probe erasure", context.progress) as steps:  # a line at least every minute (issue 56)
        rows = {f"layer_{k}": erase_layer(k, x, eraser, data, seen, settings, context, steps)
                for k, x, eraser in layer_erasers(context, read_.splits, data, settings, steps)}
    metrics = {"test": {"majority": majority, "prior_bits": prior, "test_unseen": int((~seen).sum()),
                        **{f"{layer}_{key}": value for layer, row in rows.items() for key, value in row.items()}}}
    printed = {"data": "ud_ewt", "tags": settings.tags, "train_sentences": len(read_.splits["train"]),
               "majority": majority, "prior_bits": prior, "leace": {**LEACE, "svd_tol": settings.svd_tol},
               "stream": settings.stream,
               "layers": rows}
    block = {"name": "ud_ewt", "fraction": 1.0, "train_sentences": len(read_.splits["train"]), "tags": settings.tags,
             "num_classes": len(data.classes), "split_overlap": read_.overlap}
    return ProbeOutcome(printed, metrics, f"{next(iter(rows))}_accuracy_after", block)
