"""Probes mdl and mdl_mlp: the online code of the tags (and, with ``probe.control``, of the control task's labels)
given each layer, every block's probe trained from scratch with dev early stopping (elmo_bench.probe.mdl.online_code).

Printed: ``{"data", "tag_column", "num_classes", "train_sentences", "fractions", "units": "bits", "probe",
"encoder", "train": {"layer_<k>": {"online_bits", "uniform_bits", "compression", "blocks"}}, "test":
{"layer_<k>": {"accuracy"}}, ["control": {...}]}``; results.json (task ``mdl_probe``): ``metrics.train``
``[control_]layer_<k>_{online_bits,uniform_bits,compression}``, ``metrics.test`` ``[control_]layer_<k>_accuracy``.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

import numpy as np
import torch

from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.lib.classifiers import ProbeSpec
from elmo_bench.probe.lib.control import control_tags
from elmo_bench.probe.lib.features import layer_features, tag_ids
from elmo_bench.probe.lib.regimen import Regimen, Tokens, train_probe
from elmo_bench.probe.lib.stacked import train_probes
from elmo_bench.probe.lib.ud_data import SPLITS, read_tagged
from elmo_bench.probe.mdl import online_code as mdl
from elmo_bench.probe.mdl.config import MdlSettings
from elmo_bench.probe.settings import UD_EWT

log = logging.getLogger(__name__)


class FittedRegimenProbe:
    """A probe trained by elmo_bench.probe.lib.regimen, read as mdl's ``FittedProbe``."""

    def __init__(self, probe: Any) -> None:
        self.probe = probe

    def log_probs(self, data: Any) -> np.ndarray:
        device = next(self.probe.parameters()).device
        with torch.no_grad():
            out = [torch.log_softmax(self.probe(torch.from_numpy(data.features[a:a + 8192]).to(device)), -1).cpu()
                   for a in range(0, len(data.features), 8192)]
        return torch.cat(out).numpy() if out else np.zeros((0, 1), dtype=np.float32)


def linear_factory(num_classes: int, settings: MdlSettings, device: torch.device) -> Any:
    """The authors' online-code linear probe (elmo_bench.probe.mdl.online_code.LinearProbeTrainer)."""
    return mdl.LinearProbeTrainer(num_classes=num_classes, max_epochs=settings.max_epochs)


def papers_factory(kind: str) -> Callable[[int, MdlSettings, torch.device], Any]:
    """A ProbeFactory for Hewitt & Liang's MLP probes trained with their regimen: Voita & Titov's MLP rows."""

    def factory_for(num_classes: int, settings: MdlSettings, device: torch.device) -> Any:
        spec = ProbeSpec(kind, hidden=settings.hidden)

        def train(train_data: Any, dev_data: Any, seed: int) -> FittedRegimenProbe:
            def parts(data: Any) -> tuple[list[Any], list[Any]]:
                lengths = [int(n) for n in data.lengths]
                return (list(torch.split(torch.from_numpy(data.features), lengths)),
                        list(torch.split(torch.from_numpy(data.labels), lengths)))

            trained = train_probe(spec, *parts(train_data), *parts(dev_data), num_classes,
                                  Regimen(max_epochs=settings.max_epochs, seed=seed), device)
            return FittedRegimenProbe(trained.probe)

        return train

    return factory_for


def papers_many(kind: str) -> Callable[[int, MdlSettings, torch.device], mdl.ManyFactory]:
    """``papers_factory``'s probes of one block trained together (elmo_bench.probe.lib.stacked): every layer and
    labelling at once, each probe the one ``papers_factory`` trains on that problem alone."""

    def many_for(num_classes: int, settings: MdlSettings, device: torch.device) -> mdl.ManyFactory:
        spec = ProbeSpec(kind, hidden=settings.hidden)

        def train(trains: Sequence[Any], devs: Sequence[Any], seed: int) -> list[FittedRegimenProbe]:
            tensors: dict[int, torch.Tensor] = {}          # one tensor per array: problems sharing it share it

            def tokens(data: Any) -> Tokens:
                for array in (data.features, data.labels):
                    if id(array) not in tensors:
                        tensors[id(array)] = torch.from_numpy(array).to(device)
                return Tokens.flat(tensors[id(data.features)], tensors[id(data.labels)], data.lengths, device)

            trained = train_probes(spec, [tokens(t) for t in trains], [tokens(d) for d in devs], num_classes,
                                   Regimen(max_epochs=settings.max_epochs, seed=seed), device)
            return [FittedRegimenProbe(t.probe) for t in trained]

        return train

    return many_for


#: ``probe.probe`` → (K, settings, device) → a ProbeFactory; a new probe registers here
FACTORIES = {"linear": linear_factory, "mlp1": papers_factory("mlp1"), "mlp2": papers_factory("mlp2")}
#: the probes whose blocks train every layer and labelling together (``probe.probe`` → a ManyFactory's maker)
MANY = {"linear": lambda k, settings, device: linear_factory(k, settings, device).many,
        "mlp1": papers_many("mlp1"), "mlp2": papers_many("mlp2")}


def token_data(features: np.ndarray, examples: Sequence[Any], labels: Any) -> mdl.TokenData:
    """A ``TokenData`` of one split: features (n_tokens, dim), tag ids (n_tokens,), sentence lengths."""
    lengths = np.array([len(ex["tokens"]) for ex in examples], dtype=np.int64)
    return mdl.TokenData(np.ascontiguousarray(features, dtype=np.float32), np.asarray(labels, dtype=np.int64),
                         lengths)


def online_codes(features: dict[str, np.ndarray], splits: dict[str, Any], targets: dict[str, dict[str, Any]],
                 layers: Sequence[tuple[int, int]], trainer: Any, seed: int, num_classes: int,
                 many: mdl.ManyFactory | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """Per labelling of ``targets`` (the tags, the control task's), ``{"train": {layer_<k>: codelength summary},
    "test": {layer_<k>: {"accuracy"}}}``; each layer (its position in the output, its index k in the model) named by
    k. With ``many`` every block's probes of every layer and labelling train together (the same codes)."""
    arrays = {at: {s: np.ascontiguousarray(features[s][:, at], dtype=np.float32) for s in splits} for at, _ in layers}
    lengths = {s: np.array([len(ex["tokens"]) for ex in splits[s]], dtype=np.int64) for s in splits}
    ids = {which: {s: np.asarray(labels[s], dtype=np.int64) for s in splits} for which, labels in targets.items()}
    problems = [(which, at, k) for which in targets for at, k in layers]
    data = [{s: mdl.TokenData(arrays[at][s], ids[which][s], lengths[s]) for s in splits} for which, at, _ in problems]
    if many is None:
        codes = [mdl.online_codelength(d["train"], d["dev"], num_classes, trainer, seed=seed) for d in data]
    else:
        codes = mdl.online_codelengths([d["train"] for d in data], [d["dev"] for d in data], num_classes, many, seed)
    out: dict[str, dict[str, dict[str, Any]]] = {which: {"train": {}, "test": {}} for which in targets}
    for (which, _, k), d, code in zip(problems, data, codes):
        out[which]["train"][f"layer_{k}"] = code.summary()
        out[which]["test"][f"layer_{k}"] = {"accuracy": round(mdl.accuracy(code.final, d["test"]), 2)}
        log.info("%s, layer %d: %.0f bits online, compression %.2f", which, k, code.online_bits, code.compression)
    return out


def flat_metrics(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """results.json's ``metrics``: the tags' codes, then the control task's as ``control_<layer>_<metric>``."""
    metrics: dict[str, dict[str, Any]] = {"train": {}, "test": {}}
    for prefix, codes in (("", summary), ("control_", summary.get("control"))):
        for layer, row in (codes or {}).get("train", {}).items():
            metrics["train"].update({f"{prefix}{layer}_{m}": row[m] for m in ("online_bits", "uniform_bits",
                                                                               "compression")})
        for layer, row in (codes or {}).get("test", {}).items():
            metrics["test"][f"{prefix}{layer}_accuracy"] = row["accuracy"]
    return metrics


def run(context: ProbeContext) -> ProbeOutcome:
    """Probe mdl / mdl_mlp on ``context``'s encoder (see the module docstring)."""
    settings: MdlSettings = context.settings
    read = read_tagged(context.data_dir(settings.data_dir, UD_EWT), settings.tags, settings.max_train_sentences)
    splits = read.splits
    mdl.check_blocks(len(splits["train"]))
    classes = sorted({t for ex in splits["train"] for t in ex["tags"]})
    targets = {"task": {s: tag_ids(splits[s], classes) for s in splits}}
    if settings.control:                                  # Hewitt & Liang's control labels, drawn with the seed
        targets["control"] = control_tags(splits, classes, context.seed)
    features = {s: layer_features(context.layers([ex["tokens"] for ex in splits[s]], f"pos/{s}"), len(splits[s]))
                for s in SPLITS}
    record = context.encoder_record
    summary: dict[str, Any] = {"data": "ud_ewt_pos", "tag_column": settings.tags, "num_classes": len(classes),
                               "train_sentences": len(splits["train"]), "fractions": list(mdl.FRACTIONS),
                               "units": "bits", "probe": settings.probe, "encoder": record["hash"]}
    trainer = FACTORIES[settings.probe](len(classes), settings, context.device)
    many = MANY[settings.probe](len(classes), settings, context.device) if settings.probe in MANY else None
    codes = online_codes(features, splits, targets, context.probed_layers(settings.layers), trainer, context.seed,
                         len(classes), many)
    summary.update(codes["task"])
    if "control" in codes:
        summary.update(control=codes["control"])
    main_layer = "layer_1" if "layer_1" in summary["train"] else next(iter(summary["train"]))
    data = {"name": "ud_ewt_pos", "fraction": 1.0, "train_sentences": summary["train_sentences"],
            "tag_column": settings.tags, "num_classes": summary["num_classes"], "split_overlap": read.overlap}
    probes = {"train": summary["train"], "units": "bits",
              **({"control": summary["control"]["train"]} if "control" in summary else {})}
    return ProbeOutcome(summary, flat_metrics(summary), f"{main_layer}_compression", data, probes=probes)
