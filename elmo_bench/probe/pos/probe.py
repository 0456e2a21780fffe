"""Probes pos and pos_controls: read UD English-EWT (checked), take every layer from the activation cache, train
the converged probe (and, when the settings ask, the papers' probes and the control task), score dev and test.

The printed object keeps ``elmo-bench probe-pos``'s nesting (``test``/``dev`` per row, ``l2``, ``converged``; with
the papers' probes or the control task also ``control``, ``selectivity``, ``sd``, ``best_layer``, ``probing``);
results.json's ``metrics.<split>`` holds ``<row>_accuracy`` (task ``pos_probe``, what the report's Table 6 reads).
"""
from __future__ import annotations

import logging
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.data.glove import load_glove
from elmo_bench.encoders.kinds import kind_of
from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.lib.classifiers import ProbeSpec
from elmo_bench.probe.lib.features import baseline_accuracy, glove_features, layer_column, split_tokens, tag_ids
from elmo_bench.probe.lib.regimen import Regimen
from elmo_bench.probe.lib.ud_data import SPLITS, read_tagged, tagged_data_block
from elmo_bench.probe.pos.config import PosSettings
from elmo_bench.probe.pos.converged import probe_rows
from elmo_bench.probe.pos.fits import ProbeSettings, probe_details, rounded, run_probes, summarise
from elmo_bench.probe.settings import UD_EWT

log = logging.getLogger(__name__)
#: the summary's accuracy trees, printed to 2 decimals (p-values to 4); knobs and L2 values print as they are
ROUNDED = ("dev", "test", "control", "selectivity", "sd", "best_layer")
#: what results.json keeps beside the metrics (the report's probe tables read them)
EXTRA = ("control", "selectivity", "sd", "best_layer", "probing", "random_init")


def probe_settings(settings: PosSettings) -> ProbeSettings:
    """The fitting settings elmo_bench.probe.pos.fits takes, from the typed ``probe.*`` settings."""
    spec = {p: ProbeSpec(p, settings.hidden, settings.rank, settings.dropout) for p in settings.probe
            if p != "converged"}
    regimen = Regimen(weight_decay=settings.weight_decay, max_epochs=settings.max_epochs,
                      batch_sentences=settings.batch_sentences)
    return ProbeSettings(list(settings.probe), list(settings.seeds), bool(settings.control), spec, regimen,
                         list(settings.l2_grid), settings.max_iter, settings.tol)


def views(settings: PosSettings, splits: Mapping[str, Sequence[dict]], layers: Mapping[str, Any],
          probed: Sequence[tuple[int, int]]) -> dict[str, dict[str, Any]]:
    """{row: {split: (n_tokens, dim)}}: each probed layer, the average of all layers and (``probe.glove``) GloVe;
    ``probe.rows`` keeps only the rows it names. ``layers[split]``: (n_tokens, L+1, dim), an array or a split left
    in the activation cache (features.split_tokens); a layer row is then read lazily (features.TokenColumn)."""
    out = {f"layer_{index}": {s: layer_column(layers[s], at) for s in SPLITS}    # named as in the model
           for at, index in probed}
    out["average"] = {s: layer_column(layers[s], None) for s in SPLITS}
    wanted = set(out) | ({"glove"} if settings.glove else set())
    if settings.rows is not None:
        wanted = set(settings.rows)
        unknown = sorted(wanted - set(out) - {"glove"})
        if unknown or not wanted:
            raise ConfigError(f"config: probe.rows expected a list of {', '.join([*out, 'glove'])}, found "
                              f"{list(settings.rows)}")
        out = {k: v for k, v in out.items() if k in wanted}
    if "glove" in wanted and settings.glove:
        vectors, dim = load_glove({w for s in SPLITS for ex in splits[s] for w in ex["tokens"]})
        out["glove"] = {s: glove_features(splits[s], vectors, dim) for s in SPLITS}
    return out


def main_row(rows: Sequence[str]) -> str:
    """The row results.json's ``main_metric`` names: ``layer_1`` (the biLM's first LSTM layer, Table 6's) where it
    was probed, else the first probed layer above 0 (``encoder.layers=every:4``: ``layer_4``), else the first row;
    never a row the run has no metric for."""
    names = list(rows)
    layers = [n for n in names if n.startswith("layer_")]
    if "layer_1" in layers:
        return "layer_1"
    return ([n for n in layers if n != "layer_0"] or layers or names)[0]


def run(context: ProbeContext) -> ProbeOutcome:
    """Probe pos / pos_controls on ``context``'s encoder (see the module docstring)."""
    settings: PosSettings = context.settings
    read = read_tagged(context.data_dir(settings.data_dir, UD_EWT), settings.tags, settings.max_train_sentences,
                       settings.max_dev_sentences)
    splits = read.splits
    labels = sorted({t for ex in splits["train"] for t in ex["tags"]})
    y = {s: tag_ids(splits[s], labels) for s in SPLITS}
    layers = {s: split_tokens(context.layers([ex["tokens"] for ex in splits[s]], f"pos/{s}"), len(splits[s]))
              for s in SPLITS}              # left in the cache, read a chunk at a time in its dtype (fp16): no copy
    rows = views(settings, splits, layers, context.probed_layers(settings.layers))
    baseline = {s: baseline_accuracy(splits["train"], splits[s]) for s in ("dev", "test")}
    # the printed keys are the biLM's contract ("bilm": its hash); another encoder's hash is "encoder" (issue 56)
    hashed = context.encoder_record["hash"]
    named = {"bilm": hashed} if kind_of(context.encoder_record["encoder"]).default else {"encoder": hashed}
    head = {"data": "ud_ewt_pos", "tag_column": settings.tags, "train_sentences": len(splits["train"]),
            **{f"{s}_tokens": int(len(y[s])) for s in SPLITS}, **named}
    fitting = probe_settings(settings)
    data = tagged_data_block(read, settings.tags, settings.max_train_sentences)
    if fitting.probes != ["converged"] or fitting.control or context.encoder_record.get("random_init"):
        as_float = {n: {s: np.asarray(v, dtype=np.float32) for s, v in r.items()} for n, r in rows.items()}
        return controlled(context, fitting, splits, labels, as_float, baseline, head, data)
    return converged(rows, y, len(labels), fitting, baseline, head, data, context.device)


def converged(rows: Mapping[str, Any], y: Mapping[str, torch.Tensor], classes: int, fitting: ProbeSettings,
              baseline: Mapping[str, float], head: Mapping[str, Any], data: dict[str, Any], device: Any = "cpu"
              ) -> ProbeOutcome:
    """The converged probe alone on every row (Table 6's record: ``probes`` holds each row's L2 path), the rows of
    one width in one batched solve on ``device`` (elmo_bench.probe.lib.batched; each row to its own convergence)."""
    log.info("probe: %s", ", ".join(f"{name} {features['train'].shape}" for name, features in rows.items()))
    fits = probe_rows(rows, y, classes, fitting.grid, fitting.max_iter, fitting.tol, device)
    printed = {**head,
               "test": {**{n: round(r.test, 2) for n, r in fits.items()},
                        "most_frequent_tag": round(baseline["test"], 2)},
               "dev": {**{n: round(r.dev, 2) for n, r in fits.items()},
                       "most_frequent_tag": round(baseline["dev"], 2)},
               "l2": {n: r.l2 for n, r in fits.items()}, "converged": {n: r.converged for n, r in fits.items()}}
    metrics = {split: {**{f"{n}_accuracy": getattr(r, split) for n, r in fits.items()},
                       "most_frequent_tag_accuracy": baseline[split]} for split in ("dev", "test")}
    return ProbeOutcome(printed, metrics, f"{main_row(fits)}_accuracy", data, seed=0,
                        probes={n: {**r.summary(), "l2_path": r.path} for n, r in fits.items()})


def controlled(context: ProbeContext, fitting: ProbeSettings, splits: Mapping[str, Sequence[dict]],
               labels: Sequence[str], rows: Mapping[str, Any], baseline: Mapping[str, float],
               head: Mapping[str, Any], data: dict[str, Any]) -> ProbeOutcome:
    """The papers' probes and/or the control task: accuracy, control, selectivity, sd and the best layer."""
    outcome = run_probes(rows, splits, labels, fitting, context.device)
    scores = summarise(outcome, fitting, [len(ex["tokens"]) for ex in splits["test"]])
    for split in ("dev", "test"):
        scores[split]["most_frequent_tag"] = baseline[split]
    fits = {fitting.key("converged", row): found[0].extra for (probe, row), found in outcome.real.items()
            if probe == "converged"}
    summary = {**head, **scores, "probing": fitting.record()}
    if fits:
        summary["l2"] = {k: e["l2"] for k, e in fits.items()}
        summary["converged"] = {k: e["converged"] for k, e in fits.items()}
    record = context.encoder_record
    if record.get("random_init"):
        summary["random_init"] = {"mode": record["random_init"], "seed": record.get("random_seed", 0)}
    metrics = {split: {f"{k}_accuracy": v for k, v in summary[split].items()} for split in ("dev", "test")}
    return ProbeOutcome({k: rounded(v) if k in ROUNDED else v for k, v in summary.items()}, metrics,
                        f"{fitting.key(fitting.probes[0], main_row(rows))}_accuracy", data, seed=fitting.seeds[0],
                        probes=dict(probe_details(outcome, fitting)),
                        extra={k: summary[k] for k in EXTRA if k in summary})
