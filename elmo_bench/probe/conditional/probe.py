"""Probe conditional: per family V (``probe.probe``: linear, mlp1), baseline B (none, layer0, word, random) and layer
ℓ, H_V(Y | B), H_V(Y | B, ℓ), the gain, its paired bootstrap 95% interval over test sentences and the joint probe's
accuracy, on the test split, in bits per token (elmo_bench.probe.lib.bits and conditional_mlp have the
definitions). Test tokens whose label never occurs in training are left out of every H and counted
(``test_unseen``). The MLP-1 family stops early on the dev split's loss, so its runs read dev layers too.

Printed: ``{"data", "tags", "train_sentences", "l2", "probe", "h_constant", "test_unseen", "baselines": {F: {"layer_
<k>": {"h_baseline", "h_joint", "gain", "gain_lo", "gain_hi", "accuracy"}}}}`` with F = B for the linear family and
``mlp1:B`` for MLP-1; results.json ``metrics.test``: the same flat (``h_constant``, ``test_unseen``,
``F/layer_<k>_<key>``), task ``conditional_probe``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.conditional.config import ConditionalSettings
from elmo_bench.probe.conditional.mlp import fit_mlp1, fit_mlp1_many
from elmo_bench.probe.lib import bits as cp
from elmo_bench.probe.lib.classifiers import ProbeSpec
from elmo_bench.probe.lib.labelled import Labelled, features, labelled, read
from elmo_bench.probe.lib.linear import Standardiser
from elmo_bench.probe.lib.progress import Steps
from elmo_bench.probe.lib.regimen import Regimen
from elmo_bench.probe.lib.ud_data import UdSplits, read_labelled
from elmo_bench.probe.settings import UD_EWT

log = logging.getLogger(__name__)


class Fitter:
    """Fits the family's probe on a given input and returns the test tokens' bits (seen labels only)."""

    def __init__(self, data: Labelled, settings: ConditionalSettings) -> None:
        self.data, self.settings = data, settings
        self.seen = data.y["test"] >= 0
        self.vocabulary = cp.Vocabulary.of(data.words["train"])
        self.ids = {s: self.vocabulary.ids(data.words[s]) for s in data.words}

    def bits(self, dense: dict[str, np.ndarray] | None, word: bool) -> tuple[np.ndarray, float]:
        """(bits of each seen test token, accuracy % on them) of the probe on ``dense`` (standardised on train)
        and/or the word lookup."""
        x = None
        if dense is not None:
            train = torch.from_numpy(np.ascontiguousarray(dense["train"], dtype=np.float64))
            scale = Standardiser.fit(train)
            x = {"train": scale(train), "test": scale(torch.from_numpy(np.ascontiguousarray(dense["test"],
                                                                                          dtype=np.float64)))}
        y = torch.from_numpy(self.data.y["train"])
        probe = cp.fit_lookup_softmax(x["train"] if x else None, self.ids["train"] if word else None, y,
                                      len(self.data.classes), len(self.vocabulary), self.settings.l2,
                                      self.settings.max_iter, self.settings.tol)
        seen = torch.from_numpy(self.seen)
        test_x = x["test"][seen] if x else None
        test_words = self.ids["test"][seen] if word else None
        gold = torch.from_numpy(self.data.y["test"][self.seen])
        accuracy = 100.0 * float((probe.predict(test_x, test_words) == gold).double().mean()) if len(gold) else 0.0
        return probe.bits(test_x, test_words, gold), accuracy

    def bits_many(self, inputs: Sequence[Callable[[], dict[str, np.ndarray]]], word: bool
                  ) -> list[tuple[np.ndarray, float]]:
        """``bits`` of every input (each made when its fit starts: the L-BFGS family fits one at a time)."""
        return [self.bits(make(), word) for make in inputs]


class MlpFitter(Fitter):
    """The MLP-1 family: the control-task regimen's MLP-1 (early stopping on dev), seeded with the run's seed."""

    def __init__(self, data: Labelled, settings: ConditionalSettings, seed: int, device: Any,
                 stacked: bool = True) -> None:
        super().__init__(data, settings)
        self.stacked = stacked                  # the layers' MLPs of one baseline trained together (same fits)
        self.spec = ProbeSpec("mlp1", settings.hidden, dropout=settings.dropout)
        self.regimen = Regimen(weight_decay=settings.weight_decay, batch_sentences=settings.batch_sentences,
                               max_epochs=settings.max_epochs, seed=seed)
        self.device = device

    def bits(self, dense: dict[str, np.ndarray] | None, word: bool) -> tuple[np.ndarray, float]:
        fit = fit_mlp1(dense, self.ids if word else None, self.data.y, self.data.lengths, len(self.data.classes),
                       len(self.vocabulary), self.spec, self.regimen, self.device)
        log.info("mlp1: %d epochs, kept epoch %d, test accuracy %.2f", fit.epochs, fit.best_epoch, fit.accuracy)
        return fit.bits, fit.accuracy

    def bits_many(self, inputs: Sequence[Callable[[], dict[str, np.ndarray]]], word: bool
                  ) -> list[tuple[np.ndarray, float]]:
        """``bits`` of every input, the MLPs trained together (elmo_bench.probe.conditional.mlp.fit_mlp1_many: each
        fit the one ``bits`` gives alone)."""
        fits = fit_mlp1_many([make() for make in inputs], self.ids if word else None, self.data.y, self.data.lengths,
                             len(self.data.classes), len(self.vocabulary), self.spec, self.regimen, self.device,
                             self.stacked)
        for fit in fits:
            log.info("mlp1: %d epochs, kept epoch %d, test accuracy %.2f", fit.epochs, fit.best_epoch, fit.accuracy)
        return [(fit.bits, fit.accuracy) for fit in fits]


def row(fitter: Fitter, base: np.ndarray, joint: np.ndarray, accuracy: float, seed: int) -> dict[str, float]:
    """One (baseline, layer) row: both H, the gain, its paired bootstrap interval over test sentences, accuracy."""
    seen, lengths = fitter.seen, fitter.data.lengths["test"]
    spread = {}
    for name, values in (("base", base), ("joint", joint)):
        full = np.zeros(len(seen))
        full[seen] = values
        spread[name] = cp.per_sentence(full, lengths)
    tokens = cp.per_sentence(seen.astype(np.float64), lengths)
    low, high = cp.bootstrap_gain(spread["base"], spread["joint"], tokens, fitter.settings.bootstrap, seed)
    h_base, h_joint = float(base.mean()), float(joint.mean())
    return {"h_baseline": h_base, "h_joint": h_joint, "gain": h_base - h_joint, "gain_lo": low, "gain_hi": high,
            "accuracy": accuracy}


def baseline_rows(name: str, fitter: Fitter, layers: dict[str, np.ndarray], twin: dict[str, np.ndarray] | None,
                  probed: list[tuple[int, int]], constant: np.ndarray, seed: int,
                  steps: Steps) -> dict[str, dict[str, float]]:
    """Every probed layer's row against baseline ``name`` (a step each of ``steps``); a baseline that does not
    depend on the layer is fitted once, the probes of every layer fitted by one ``bits_many``."""
    def layer(k: int, source: dict[str, np.ndarray]) -> Callable[[], dict[str, np.ndarray]]:
        return lambda: {s: source[s][:, k] for s in source}

    def joined(k: int, source: dict[str, np.ndarray], base_k: int) -> Callable[[], dict[str, np.ndarray]]:
        return lambda: {s: np.concatenate([source[s][:, base_k], layers[s][:, k]], axis=1) for s in source}

    fixed = {"none": lambda: (constant, 0.0), "layer0": lambda: fitter.bits(layer(0, layers)(), False),
             "word": lambda: fitter.bits(None, True)}
    steps.now(f"baseline {name}")
    base = fixed[name]() if name in fixed else None
    at = [a for a, _ in probed]          # a layer's position in the encoder's output; k (below) its index in the model
    log.info("baseline %s, layers %s", name, ", ".join(str(k) for _, k in probed))
    bases = fitter.bits_many([layer(a, twin) for a in at], False) if name == "random" else [base] * len(at)
    if name == "random":
        joints = fitter.bits_many([joined(a, twin, a) for a in at], False)
    elif name == "layer0":
        joints = fitter.bits_many([joined(a, layers, 0) for a in at], False)
    else:
        joints = fitter.bits_many([layer(a, layers) for a in at], name == "word")
    out = {}
    for (_, k), base_k, joint in zip(probed, bases, joints):
        steps.now(f"baseline {name}, layer {k}")
        out[f"layer_{k}"] = row(fitter, base_k[0], joint[0], joint[1], seed)
        steps.advance()
    return out


def run(context: ProbeContext) -> ProbeOutcome:
    """Probe conditional on ``context``'s encoder (see the module docstring)."""
    settings: ConditionalSettings = context.settings
    read_ = read(context, settings, settings.max_dev_sentences)
    data = labelled(read_.splits)
    names = settings.encoded_splits                                                    # dev: MLP-1's stopping
    twin = None
    if "random" in settings.baselines:   # checked before any layer is computed: hdf5 has no random twin
        twin = features(context.random_twin(0), read_.splits, names)
    layers = features(context, read_.splits, names)
    fitters = {"linear": lambda: Fitter(data, settings),
               "mlp1": lambda: MlpFitter(data, settings, context.seed, context.device)}
    seen = data.y["test"] >= 0
    constant = cp.constant_bits(data.y["train"], data.y["test"][seen], len(data.classes))
    rows: dict[str, dict[str, dict[str, float]]] = {}
    probed = context.probed_layers(settings.layers)
    total = len(settings.probe) * len(settings.baselines) * len(probed)
    with Steps(total, "probe conditional", context.progress) as steps:  # a line at least every minute (issue 56)
        for family in settings.probe:
            fitter, steps.scope = fitters[family](), family
            prefix = "" if family == "linear" else f"{family}:"
            for b in settings.baselines:
                rows[prefix + b] = baseline_rows(b, fitter, layers, twin, probed, constant, context.seed, steps)
    printed = {"data": "ud_ewt", "tags": settings.tags, "train_sentences": len(read_.splits["train"]),
               "l2": settings.l2, "probe": list(settings.probe), "h_constant": float(constant.mean()),
               "test_unseen": int((~seen).sum()), "baselines": rows}
    metrics = {"test": {"h_constant": printed["h_constant"], "test_unseen": printed["test_unseen"],
                        **{f"{b}/{layer}_{key}": value for b, by_layer in rows.items()
                           for layer, values in by_layer.items() for key, value in values.items()}}}
    block = {"name": "ud_ewt", "fraction": 1.0, "train_sentences": len(read_.splits["train"]), "tags": settings.tags,
             "num_classes": len(data.classes), "split_overlap": read_.overlap}
    main = f"{next(iter(rows))}/layer_{context.probed_layers(settings.layers)[-1][1]}_gain"
    return ProbeOutcome(printed, metrics, main, block)
