"""``elmo-bench probe-structural``: Hewitt & Manning's distance and depth probes on every layer of a frozen encoder.

Prints, last, one JSON object ``{"dev": {"layer_<k>": {"uuas", "dspr", "root_acc", "nspr"}}, "test": {...},
"baselines": {"linear_chain": {"uuas", "dev_uuas"}}, ...}`` (UUAS and root accuracy in percent, Spearman values in
[-1, 1], null where no sentence has 5..50 words). Data: UD English-EWT CoNLL-U with its basic HEAD column
(``--data-dir``); layers from the activation cache, the same encoder options as ``probe-pos``. With ``--out DIR``
it also writes ``DIR/results.json`` (task ``structural_probe``).
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.paths import CACHE_DIR, REPO
from elmo_bench.probe import structural_metrics as sm
from elmo_bench.probe.conllu_trees import depths, read_trees
from elmo_bench.probe.layer_selection import layer_indices
from elmo_bench.probe.pos_cli import DEFAULT_DATA, _positive_int, _split_paths, probe_encoder, start_probe_run
from elmo_bench.probe.wsd_cli import bilm_name
from elmo_bench.records.run_record import RESULTS_FILE, RunRecord, git_commit

log = logging.getLogger("elmo_bench.probe.structural")
SPLITS = ("train", "dev", "test")


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-structural", description=__doc__.splitlines()[0])
    from elmo_bench.encoders.cli_options import add_probe_encoder_arguments  # lazy: torch

    add_probe_encoder_arguments(p)
    p.add_argument("--data-dir", default=str(DEFAULT_DATA),
                   help="UD English-EWT directory (en_ewt-ud-{train,dev,test}.conllu, train may be .gz)")
    p.add_argument("--max-train-sentences", type=_positive_int, default=None,
                   help="the first N training sentences (default: all of them)")
    p.add_argument("--rank", type=_positive_int, default=None, help="rank of B (default: the layer's width)")
    p.add_argument("--punct", default="xpos", choices=["xpos", "upos"],
                   help="punctuation left out of UUAS and root accuracy: the authors' PTB XPOS list, or UPOS PUNCT")
    p.add_argument("--layers", default=None, help="comma-separated layer indices (default: every layer)")
    p.add_argument("--max-epochs", type=_positive_int, default=40, help="at most this many epochs (authors: 40)")
    p.add_argument("--batch-size", type=_positive_int, default=20, help="sentences per batch (authors: 20)")
    p.add_argument("--seed", type=int, default=0, help="initialisation and shuffling seed")
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--threads", type=_positive_int, default=1, help="torch intra-op threads")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", default=None, help="also write OUT/results.json")
    return p


def read_splits(args: argparse.Namespace) -> dict[str, list[Any]]:
    """The three splits as checked trees, training cut to ``--max-train-sentences``."""
    splits = {s: read_trees(p, s) for s, p in _split_paths(Path(args.data_dir)).items()}
    if args.max_train_sentences:
        splits["train"] = splits["train"][: args.max_train_sentences]
    return splits


def cached_layers(args: argparse.Namespace, splits: dict[str, list[Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """{split: CachedLayers} (``get(i)`` → (L+1, n_i, dim)) and the encoder's record."""
    from elmo_bench.encoders.cache import ActivationCache, check_first_sentence  # lazy: torch

    encoder, record = probe_encoder(args)                     # --random-init and --device as probe-pos takes them
    check_first_sentence(encoder, [t.tokens for t in splits["train"]], "the first training sentence (UD EWT)")
    cache = ActivationCache(args.cache_dir, encoder, progress=not args.no_progress)
    layers = {s: cache.layers([t.tokens for t in sentences], name=f"ud_ewt/{s}") for s, sentences in splits.items()}
    return layers, {**record, "seconds_in_bilm": cache.seconds_in_bilm}


def gold(splits: dict[str, list[Any]], punct_mode: str) -> dict[str, dict[str, list[Any]]]:
    """Per split: gold ``distances`` (n, n), ``depths`` (n,) and ``punct`` (n,) bool, one entry per sentence."""
    return {s: {"distances": [sm.tree_distances(t.heads) for t in sentences],
                "depths": [np.asarray(depths(t.heads), dtype=np.float32) for t in sentences],
                "punct": [sm.punctuation(t.xpos, t.upos, punct_mode) for t in sentences]}
            for s, sentences in splits.items()}


def probe_layer(k: int, layers: dict[str, Any], golds: dict[str, Any], args: argparse.Namespace, dim: int):
    """Train both probes on layer ``k``; {split: metrics} for dev and test, and both training histories."""
    import torch  # lazy: torch

    from elmo_bench.probe import structural as st  # lazy: torch

    feats = {s: [np.ascontiguousarray(layers[s].get(i)[k]) for i in range(len(layers[s]))] for s in SPLITS}
    rank = args.rank or dim
    out: dict[str, dict[str, Any]] = {"dev": {}, "test": {}}
    histories = {}
    for name, cls, label in (("distance", st.DistanceProbe, "distances"), ("depth", st.DepthProbe, "depths")):
        data = {s: st.Split(feats[s], golds[s][label]) for s in SPLITS}
        torch.manual_seed(args.seed)
        regimen = st.Regimen(batch_size=args.batch_size, max_epochs=args.max_epochs, seed=args.seed)
        probe = st.train_probe(cls(dim, rank), data["train"], data["dev"], regimen)
        histories[name] = regimen.history
        for s in ("dev", "test"):
            predicted = st.predict(probe, data[s], args.batch_size)
            g, punct = golds[s][label], golds[s]["punct"]
            if name == "distance":
                out[s].update(_scored("uuas", sm.uuas(predicted, g, punct)), dspr=_round(sm.dspr(predicted, g)))
            else:
                out[s].update(_scored("root_acc", sm.root_accuracy(predicted, g, punct)),
                              nspr=_round(sm.nspr(predicted, g)))
    return out, histories


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _scored(name: str, found: sm.Scored) -> dict[str, Any]:
    """``{name: value}`` in percent to 2 digits; a metric with nothing to score is null with its count beside it
    (``<name>_count``: 0), never a number that reads as a result."""
    return {name: _round(found.value, 2)} if found.value is not None else {name: None, f"{name}_count": found.count}


def probe_structural_main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    started = start_probe_run(args)
    splits = read_splits(args)
    golds = gold(splits, args.punct)
    layers, encoder = cached_layers(args, splits)
    summary: dict[str, Any] = {"data": "ud_ewt", "punct": args.punct, "train_sentences": len(splits["train"]),
                               "encoder": encoder["hash"], "dev": {}, "test": {}}
    histories = {}
    for k in layer_indices(args.layers, encoder["layers"], "elmo-bench probe-structural"):
        log.info("layer %d", k)
        scores, histories[f"layer_{k}"] = probe_layer(k, layers, golds, args, encoder["dim"])
        for s in ("dev", "test"):
            summary[s][f"layer_{k}"] = scores[s]
    chain = {s: sm.uuas([sm.linear_chain(len(g)) for g in golds[s]["depths"]], golds[s]["distances"], golds[s]["punct"])
             for s in ("dev", "test")}
    summary["baselines"] = {"linear_chain": {"uuas": _round(chain["test"].value, 2),
                                             "dev_uuas": _round(chain["dev"].value, 2)}}
    if args.out:
        write_results(Path(args.out), args, summary, histories, encoder, time.perf_counter() - started)
    print(json.dumps(summary))
    return 0


def write_results(out: Path, args: argparse.Namespace, summary: dict[str, Any], histories: dict[str, Any],
                  encoder: dict[str, Any], seconds: float) -> None:
    """OUT/results.json in the engine's schema (task ``structural_probe``): one metric per layer, metric and split."""
    metrics = {s: {f"{layer}_{m}": v for layer, row in summary[s].items() for m, v in row.items()}
               for s in ("dev", "test")}
    for s in ("dev", "test"):
        key = "uuas" if s == "test" else "dev_uuas"
        metrics[s]["linear_chain_uuas"] = summary["baselines"]["linear_chain"][key]
    config = dict(vars(args))
    config["choices"] = {"task": "structural_probe", "data": "ud_ewt", "bilm": bilm_name(args.options)}
    out.mkdir(parents=True, exist_ok=True)
    RunRecord(
        task="structural_probe", embedder="elmo", seed=args.seed, config=config,
        data={"name": "ud_ewt", "fraction": 1.0, "train_sentences": summary["train_sentences"], "punct": args.punct},
        metrics=metrics, main_metric="layer_1_uuas", probes={"histories": histories},
        epochs={"run": 0, "best": None, "history": []},
        timings={"total_seconds": seconds, "bilm_seconds": encoder["seconds_in_bilm"]},
        bilm={"name": bilm_name(args.options), "hash": encoder["hash"], "layers": encoder["layers"],
              "dim": encoder["dim"]} if args.encoder == "bilm" else None,
        encoder=encoder["encoder"], git_commit=git_commit(REPO),
    ).write(out / RESULTS_FILE)
