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
from elmo_bench.probe.layer_selection import layer_indices
from elmo_bench.probe.pos_cli import DEFAULT_DATA, _positive_int, bilm_features, read, start_probe_run
from elmo_bench.probe.wsd_cli import bilm_name
from elmo_bench.records.run_record import RESULTS_FILE, RunRecord, git_commit

log = logging.getLogger("elmo_bench.probe.mdl")


def _linear(num_classes: int, args: argparse.Namespace) -> Any:
    from elmo_bench.probe.mdl import LinearProbeTrainer  # lazy: torch

    return LinearProbeTrainer(num_classes=num_classes, max_epochs=args.max_epochs)


class FittedRegimenProbe:
    """A probe trained by elmo_bench.probe.regimen, read as mdl's ``FittedProbe``."""

    def __init__(self, probe: Any) -> None:
        self.probe = probe

    def log_probs(self, data: Any) -> np.ndarray:
        import torch  # lazy: torch

        device = next(self.probe.parameters()).device
        with torch.no_grad():
            out = [torch.log_softmax(self.probe(torch.from_numpy(data.features[a:a + 8192]).to(device)), -1).cpu()
                   for a in range(0, len(data.features), 8192)]
        return torch.cat(out).numpy() if out else np.zeros((0, 1), dtype=np.float32)


def _papers_probe(kind: str):
    """A ProbeFactory for Hewitt & Liang's MLP probes (elmo_bench.probe.classifiers), trained with their regimen
    (elmo_bench.probe.regimen): Voita & Titov's MLP rows."""

    def factory_for(num_classes: int, args: argparse.Namespace) -> Any:
        import torch  # lazy: torch

        from elmo_bench.base.device import resolve_device  # lazy: torch
        from elmo_bench.probe.classifiers import ProbeSpec  # lazy: torch
        from elmo_bench.probe.regimen import Regimen, train_probe  # lazy: torch

        spec, device = ProbeSpec(kind, hidden=args.hidden), resolve_device(args.device, "--device")

        def train(train_data: Any, dev_data: Any, seed: int) -> FittedRegimenProbe:
            def parts(data: Any) -> tuple[list[Any], list[Any]]:
                lengths = [int(n) for n in data.lengths]
                return (list(torch.split(torch.from_numpy(data.features), lengths)),
                        list(torch.split(torch.from_numpy(data.labels), lengths)))

            trained = train_probe(spec, *parts(train_data), *parts(dev_data), num_classes,
                                  Regimen(max_epochs=args.max_epochs, seed=seed), device)
            return FittedRegimenProbe(trained.probe)

        return train

    return factory_for


#: ``--probe`` name → (K, parsed arguments) → a ProbeFactory; a new probe registers here
FACTORIES = {"linear": _linear, "mlp1": _papers_probe("mlp1"), "mlp2": _papers_probe("mlp2")}


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-mdl", description=__doc__.splitlines()[0])
    from elmo_bench.encoders.cli_options import add_probe_encoder_arguments  # lazy: torch

    add_probe_encoder_arguments(p)
    p.add_argument("--data-dir", default=str(DEFAULT_DATA),
                   help="UD English-EWT directory (en_ewt-ud-{train,dev,test}.conllu, train may be .gz)")
    p.add_argument("--tag-column", default="xpos", choices=["xpos", "upos"], help="xpos = PTB tags (the paper's)")
    p.add_argument("--max-train-sentences", type=_positive_int, default=None,
                   help="the first N training sentences before shuffling (default: all; at least 1000 for the "
                        "authors' block schedule)")
    p.add_argument("--layers", default=None, help="comma-separated layer indices (default: every layer)")
    p.add_argument("--probe", default="linear", choices=sorted(FACTORIES),
                   help="the probe trained per block (a ProbeFactory): linear softmax (default), or Hewitt & "
                        "Liang's mlp1 / mlp2 (--hidden units) with their regimen")
    p.add_argument("--hidden", type=_positive_int, default=1000, help="mlp1/mlp2 hidden units (default 1000)")
    p.add_argument("--control", action="store_true",
                   help="also code the control task's labels (Hewitt & Liang: one random tag per word type, drawn "
                        "with --seed): printed under \"control\", as \"train\"/\"test\" are for the tags")
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


def online_codes(features: dict[str, np.ndarray], splits: dict[str, Any], labels: dict[str, Any],
                 layers: Sequence[int], trainer: Any, seed: int, num_classes: int) -> dict[str, dict[str, Any]]:
    """``{"train": {layer_<k>: codelength summary}, "test": {layer_<k>: {"accuracy"}}}`` of one labelling."""
    from elmo_bench.probe import mdl  # lazy: torch

    out: dict[str, dict[str, Any]] = {"train": {}, "test": {}}
    for k in layers:
        data = {s: token_data(features[s][:, k], splits[s], labels[s]) for s in splits}
        code = mdl.online_codelength(data["train"], data["dev"], num_classes, trainer, seed=seed)
        out["train"][f"layer_{k}"] = code.summary()
        out["test"][f"layer_{k}"] = {"accuracy": round(mdl.accuracy(code.final, data["test"]), 2)}
        log.info("layer %d: %.0f bits online, compression %.2f", k, code.online_bits, code.compression)
    return out


def probe_mdl_main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    started = start_probe_run(args)
    from elmo_bench.probe import mdl  # lazy: torch
    from elmo_bench.probe.pos import tag_ids  # lazy: torch
    from elmo_bench.probe.pos_controls import control_tags  # lazy: torch

    splits = read(args)
    mdl.check_blocks(len(splits["train"]))
    classes = sorted({t for ex in splits["train"] for t in ex["tags"]})
    targets = {"task": {s: tag_ids(splits[s], classes) for s in splits}}
    if args.control:                                  # Hewitt & Liang's control labels, drawn with --seed
        targets["control"] = control_tags(splits, classes, args.seed)
    features, encoder = bilm_features(args, splits, not args.no_progress)
    summary: dict[str, Any] = {"data": "ud_ewt_pos", "tag_column": args.tag_column, "num_classes": len(classes),
                               "train_sentences": len(splits["train"]), "fractions": list(mdl.FRACTIONS),
                               "units": "bits", "probe": args.probe, "encoder": encoder["hash"]}
    trainer = FACTORIES[args.probe](len(classes), args)
    layers = layer_indices(args.layers, encoder["layers"], "elmo-bench probe-mdl")
    for which, labels in targets.items():
        codes = online_codes(features, splits, labels, layers, trainer, args.seed, len(classes))
        summary.update(codes) if which == "task" else summary.update(control=codes)
    if args.out:
        write_results(Path(args.out), args, summary, encoder, time.perf_counter() - started)
    print(json.dumps(summary))
    return 0


def write_results(out: Path, args: argparse.Namespace, summary: dict[str, Any], encoder: dict[str, Any],
                  seconds: float) -> None:
    """OUT/results.json in the engine's schema (task ``mdl_probe``); the per-block codes under ``probes``; the
    control task's (``--control``) as ``control_<layer>_<metric>`` and under ``probes.control``."""
    metrics: dict[str, dict[str, Any]] = {"train": {}, "test": {}}
    for prefix, codes in (("", summary), ("control_", summary.get("control"))):
        for layer, row in (codes or {}).get("train", {}).items():
            metrics["train"].update({f"{prefix}{layer}_{m}": row[m] for m in ("online_bits", "uniform_bits",
                                                                               "compression")})
        for layer, row in (codes or {}).get("test", {}).items():
            metrics["test"][f"{prefix}{layer}_accuracy"] = row["accuracy"]
    main_layer = "layer_1" if "layer_1" in summary["train"] else next(iter(summary["train"]))
    config = dict(vars(args))
    config["choices"] = {"task": "mdl_probe", "data": "ud_ewt_pos", "bilm": bilm_name(args.options)}
    out.mkdir(parents=True, exist_ok=True)
    RunRecord(
        task="mdl_probe", embedder="elmo", seed=args.seed, config=config,
        data={"name": "ud_ewt_pos", "fraction": 1.0, "train_sentences": summary["train_sentences"],
              "tag_column": args.tag_column, "num_classes": summary["num_classes"]},
        metrics=metrics, main_metric=f"{main_layer}_compression",
        probes={"train": summary["train"], "units": "bits",
                **({"control": summary["control"]["train"]} if "control" in summary else {})},
        epochs={"run": 0, "best": None, "history": []},
        timings={"total_seconds": seconds, "bilm_seconds": encoder["seconds_in_bilm"]},
        bilm={"name": bilm_name(args.options), "hash": encoder["hash"], "layers": encoder["layers"],
              "dim": encoder["dim"]} if args.encoder == "bilm" else None,
        encoder=encoder["encoder"], git_commit=git_commit(REPO),
    ).write(out / RESULTS_FILE)
