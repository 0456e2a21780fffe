"""Probe structural: both of Hewitt & Manning's probes per layer over the cached layers, the metrics of their
reporter (elmo_bench.probe.structural.metrics) on dev and test, and the linear chain's UUAS.

Printed: ``{"data", "punct", "train_sentences", "encoder", "dev": {"layer_<k>": {"uuas", "dspr", "root_acc",
"nspr"}}, "test": {...}, "baselines": {"linear_chain": {"uuas", "dev_uuas"}}}``; results.json's metrics
``layer_<k>_<metric>`` and ``linear_chain_uuas`` per split (task ``structural_probe``).
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np
import torch

from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.lib.conllu_trees import depths
from elmo_bench.probe.lib.ud_data import SPLITS, read_tree_splits
from elmo_bench.probe.settings import UD_EWT
from elmo_bench.probe.structural import metrics as sm
from elmo_bench.probe.structural import probes as st
from elmo_bench.probe.structural.config import StructuralSettings

log = logging.getLogger(__name__)


def gold(splits: dict[str, list[Any]], punct_mode: str) -> dict[str, dict[str, list[Any]]]:
    """Per split: gold ``distances`` (n, n), ``depths`` (n,) and ``punct`` (n,) bool, one entry per sentence."""
    return {s: {"distances": [sm.tree_distances(t.heads) for t in sentences],
                "depths": [np.asarray(depths(t.heads), dtype=np.float32) for t in sentences],
                "punct": [sm.punctuation(t.xpos, t.upos, punct_mode) for t in sentences]}
            for s, sentences in splits.items()}


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _scored(name: str, found: sm.Scored) -> dict[str, Any]:
    """``{name: value}`` in percent to 2 digits; a metric with nothing to score is null with its count beside it
    (``<name>_count``: 0), never a number that reads as a result."""
    return {name: _round(found.value, 2)} if found.value is not None else {name: None, f"{name}_count": found.count}


def probe_layer(k: int, layers: dict[str, Any], golds: dict[str, Any], settings: StructuralSettings, seed: int,
                dim: int) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Train both probes on layer ``k``; {split: metrics} for dev and test, and both training histories."""
    feats = {s: [np.ascontiguousarray(layers[s].get(i)[k]) for i in range(len(layers[s]))] for s in SPLITS}
    rank = settings.rank or dim
    out: dict[str, dict[str, Any]] = {"dev": {}, "test": {}}
    histories = {}
    for name, cls, label in (("distance", st.DistanceProbe, "distances"), ("depth", st.DepthProbe, "depths")):
        data = {s: st.Split(feats[s], golds[s][label]) for s in SPLITS}
        torch.manual_seed(seed)
        regimen = st.Regimen(batch_size=settings.batch_size, max_epochs=settings.max_epochs, seed=seed)
        probe = st.train_probe(cls(dim, rank), data["train"], data["dev"], regimen)
        histories[name] = regimen.history
        for s in ("dev", "test"):
            predicted = st.predict(probe, data[s], settings.batch_size)
            g, punct = golds[s][label], golds[s]["punct"]
            if name == "distance":
                out[s].update(_scored("uuas", sm.uuas(predicted, g, punct)), dspr=_round(sm.dspr(predicted, g)))
            else:
                out[s].update(_scored("root_acc", sm.root_accuracy(predicted, g, punct)),
                              nspr=_round(sm.nspr(predicted, g)))
    return out, histories


def run(context: ProbeContext) -> ProbeOutcome:
    """Probe structural on ``context``'s encoder (see the module docstring)."""
    settings: StructuralSettings = context.settings
    read = read_tree_splits(context.data_dir(settings.data_dir, UD_EWT), settings.max_train_sentences)
    splits = read.splits
    golds = gold(splits, settings.punct)
    layers = {s: context.layers([t.tokens for t in sentences], f"ud_ewt/{s}") for s, sentences in splits.items()}
    record = context.encoder_record
    summary: dict[str, Any] = {"data": "ud_ewt", "punct": settings.punct, "train_sentences": len(splits["train"]),
                               "encoder": record["hash"], "dev": {}, "test": {}}
    histories = {}
    for at, k in context.probed_layers(settings.layers):   # at: the layer's position in the output; k: in the model
        log.info("layer %d", k)
        scores, histories[f"layer_{k}"] = probe_layer(at, layers, golds, settings, context.seed, int(record["dim"]))
        for s in ("dev", "test"):
            summary[s][f"layer_{k}"] = scores[s]
    chain = {s: sm.uuas([sm.linear_chain(len(g)) for g in golds[s]["depths"]], golds[s]["distances"],
                        golds[s]["punct"]) for s in ("dev", "test")}
    summary["baselines"] = {"linear_chain": {"uuas": _round(chain["test"].value, 2),
                                             "dev_uuas": _round(chain["dev"].value, 2)}}
    metrics = {s: {f"{layer}_{m}": v for layer, row in summary[s].items() for m, v in row.items()}
               for s in ("dev", "test")}
    for s, key in (("test", "uuas"), ("dev", "dev_uuas")):
        metrics[s]["linear_chain_uuas"] = summary["baselines"]["linear_chain"][key]
    data = {"name": "ud_ewt", "fraction": 1.0, "train_sentences": summary["train_sentences"], "punct": settings.punct,
            "split_overlap": read.overlap}
    return ProbeOutcome(summary, metrics, "layer_1_uuas", data, probes={"histories": histories})
