"""``elmo-bench probe-mdl``: the online codelength (Voita & Titov 2020) of POS tags given each layer, in bits.

Prints, last, one JSON object ``{"train": {"layer_<k>": {"online_bits", "uniform_bits", "compression", "blocks":
[{"end", "bits"}, ...]}}, "test": {"layer_<k>": {"accuracy"}}, ...}`` (accuracy in percent, of the probe trained on
all blocks). Data and layers as ``probe-pos`` (UD English-EWT, the activation cache, the same encoder options).
With ``--out DIR`` it also writes ``DIR/results.json`` (task ``mdl_probe``).
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
from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS
from elmo_bench.probe.layer_selection import layer_indices
from elmo_bench.probe.pos_cli import DEFAULT_DATA, _positive_int, bilm_features, read
from elmo_bench.probe.wsd_cli import bilm_name
from elmo_bench.records.run_record import RunRecord, git_commit

log = logging.getLogger("elmo_bench.probe.mdl")


def _linear(num_classes: int, args: argparse.Namespace) -> Any:
    from elmo_bench.probe.mdl import LinearProbeTrainer  # lazy: torch

    return LinearProbeTrainer(num_classes=num_classes, max_epochs=args.max_epochs)


#: ``--probe`` name → (K, parsed arguments) → a ProbeFactory; other probes (MLP) register here
FACTORIES = {"linear": _linear}


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-mdl", description=__doc__.splitlines()[0])
    p.add_argument("--options", default=str(DEFAULT_OPTIONS), help="biLM options.json (default: the shipped biLM)")
    p.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="biLM weights.hdf5 (default: the shipped biLM)")
    from elmo_bench.encoders.cli_options import add_encoder_arguments  # lazy: torch

    add_encoder_arguments(p)
    p.add_argument("--data-dir", default=str(DEFAULT_DATA),
                   help="UD English-EWT directory (en_ewt-ud-{train,dev,test}.conllu, train may be .gz)")
    p.add_argument("--tag-column", default="xpos", choices=["xpos", "upos"], help="xpos = PTB tags (the paper's)")
    p.add_argument("--max-train-sentences", type=_positive_int, default=None,
                   help="the first N training sentences before shuffling (default: all; at least 1000 for the "
                        "authors' block schedule)")
    p.add_argument("--layers", default=None, help="comma-separated layer indices (default: every layer)")
    p.add_argument("--probe", default="linear", choices=sorted(FACTORIES),
                   help="the probe trained per block (a ProbeFactory; built in: linear softmax)")
    p.add_argument("--max-epochs", type=_positive_int, default=40, help="at most this many epochs per probe")
    p.add_argument("--seed", type=int, default=0, help="shuffling order and probe initialisation")
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--threads", type=_positive_int, default=1, help="torch intra-op threads")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", default=None, help="also write OUT/results.json")
    return p


def token_data(features: np.ndarray, examples: Sequence[Any], labels: Any):
    """A ``TokenData`` of one split: features (n_tokens, dim), tag ids (n_tokens,), sentence lengths."""
    from elmo_bench.probe.mdl import TokenData  # lazy: torch

    lengths = np.array([len(ex["tokens"]) for ex in examples], dtype=np.int64)
    return TokenData(np.ascontiguousarray(features, dtype=np.float32), np.asarray(labels, dtype=np.int64), lengths)


def probe_mdl_main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    import torch  # lazy: torch

    from elmo_bench.probe import mdl  # lazy: torch
    from elmo_bench.probe.pos import tag_ids  # lazy: torch

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    splits = read(args)
    mdl.check_blocks(len(splits["train"]))
    classes = sorted({t for ex in splits["train"] for t in ex["tags"]})
    features, encoder = bilm_features(args, splits, not args.no_progress)
    summary: dict[str, Any] = {"data": "ud_ewt_pos", "tag_column": args.tag_column, "num_classes": len(classes),
                               "train_sentences": len(splits["train"]), "fractions": list(mdl.FRACTIONS),
                               "units": "bits", "probe": args.probe, "encoder": encoder["hash"], "train": {},
                               "test": {}}
    trainer = FACTORIES[args.probe](len(classes), args)
    for k in layer_indices(args.layers, encoder["layers"], "elmo-bench probe-mdl"):
        data = {s: token_data(features[s][:, k], splits[s], tag_ids(splits[s], classes)) for s in splits}
        code = mdl.online_codelength(data["train"], data["dev"], len(classes), trainer, seed=args.seed)
        summary["train"][f"layer_{k}"] = code.summary()
        summary["test"][f"layer_{k}"] = {"accuracy": round(mdl.accuracy(code.final, data["test"]), 2)}
        log.info("layer %d: %.0f bits online, compression %.2f", k, code.online_bits, code.compression)
    if args.out:
        write_results(Path(args.out), args, summary, encoder, time.perf_counter() - started)
    print(json.dumps(summary))
    return 0


def write_results(out: Path, args: argparse.Namespace, summary: dict[str, Any], encoder: dict[str, Any],
                  seconds: float) -> None:
    """OUT/results.json in the engine's schema (task ``mdl_probe``); the per-block codes under ``probes``."""
    metrics = {"train": {f"{layer}_{m}": row[m] for layer, row in summary["train"].items()
                         for m in ("online_bits", "uniform_bits", "compression")},
               "test": {f"{layer}_accuracy": row["accuracy"] for layer, row in summary["test"].items()}}
    config = dict(vars(args))
    config["choices"] = {"task": "mdl_probe", "data": "ud_ewt_pos", "bilm": bilm_name(args.options)}
    out.mkdir(parents=True, exist_ok=True)
    RunRecord(
        task="mdl_probe", embedder="elmo", seed=args.seed, config=config,
        data={"name": "ud_ewt_pos", "fraction": 1.0, "train_sentences": summary["train_sentences"],
              "tag_column": args.tag_column, "num_classes": summary["num_classes"]},
        metrics=metrics, main_metric="layer_1_compression", probes={"train": summary["train"], "units": "bits"},
        epochs={"run": 0, "best": None, "history": []},
        timings={"total_seconds": seconds, "bilm_seconds": encoder["seconds_in_bilm"]},
        bilm={"name": bilm_name(args.options), "hash": encoder["hash"], "layers": encoder["layers"],
              "dim": encoder["dim"]} if args.encoder == "bilm" else None,
        encoder=encoder["encoder"], git_commit=git_commit(REPO),
    ).write(out / "results.json")
