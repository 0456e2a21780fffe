"""``elmo-bench probe-pos``: the converged linear POS probe of every biLM layer, GloVe and the most-frequent-tag
baseline on one split (paper Table 6), printed as one JSON object.

Prints ``{"data", "tag_column", "train_sentences", "train_tokens", "dev_tokens", "test_tokens", "bilm",
"test": {row: accuracy}, "dev": {row: accuracy}, "l2": {row: chosen L2}, "converged": {row: bool}}`` with rows
``layer_0 .. layer_L, average, glove, most_frequent_tag`` (accuracy in percent). With ``--out DIR`` it also writes
``DIR/results.json`` (task ``pos_probe``; the report's Table 6 reads it). The biLM layers come from the activation
cache (``--cache-dir``): a second run on the same sentences and biLM does not run the biLM.
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.base.paths import CACHE_DIR, DATA_ROOT, REPO
from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS
from elmo_bench.data.glove import load_glove
from elmo_bench.probe.wsd_cli import bilm_name
from elmo_bench.records.run_record import RESULTS_FILE, RunRecord, git_commit

DEFAULT_DATA = DATA_ROOT / "pos" / "ud_english_ewt"
DEFAULT_L2 = "1e-2,1e-3,1e-4,1e-5"
log = logging.getLogger("elmo_bench.probe.pos")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-pos", description=__doc__.splitlines()[0])
    p.add_argument("--options", default=str(DEFAULT_OPTIONS), help="biLM options.json (default: the shipped biLM)")
    p.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="biLM weights.hdf5 (default: the shipped biLM)")
    from elmo_bench.encoders.cli_options import add_encoder_arguments  # lazy: torch

    add_encoder_arguments(p)  # --encoder/--model/--pooling: any frozen encoder instead of the biLM
    p.add_argument("--data-dir", default=str(DEFAULT_DATA),
                   help="UD English-EWT directory (en_ewt-ud-{train,dev,test}.conllu, train may be .gz)")
    p.add_argument("--max-dev-sentences", type=_positive_int, default=None,
                   help="the first N dev sentences (default: all; bounds the Adam probes' per-epoch dev pass)")
    p.add_argument("--tag-column", default="xpos", choices=["xpos", "upos"], help="xpos = PTB tags (the paper's)")
    p.add_argument("--max-train-sentences", type=_positive_int, default=None,
                   help="the first N training sentences (default: all of them)")
    p.add_argument("--l2-grid", default=DEFAULT_L2, help=f"L2 strengths tried, best on dev kept; when the weakest wins, up to 3 more fits go "
                        f"down by factors of 10 (default {DEFAULT_L2})")
    p.add_argument("--max-iter", type=_positive_int, default=1000, help="L-BFGS iterations per fit at most")
    p.add_argument("--tol", type=float, default=1e-4, help="converged when the gradient max-norm is below this")
    p.add_argument("--no-glove", action="store_true", help="leave out the GloVe row")
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--threads", type=_positive_int, default=1, help="torch intra-op threads")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", default=None, help="also write OUT/results.json")
    add_probe_arguments(p)
    return p


def add_probe_arguments(p: argparse.ArgumentParser) -> None:
    """The control task, the papers' probes, seeds, random encoders and the device (elmo_bench.probe.pos_controls)."""
    from elmo_bench.encoders.cli_options import add_device_argument, add_random_init_arguments  # lazy: torch

    add_device_argument(p)
    p.add_argument("--probe", default="converged",
                   help="converged | linear | mlp1 | mlp2, or a comma list of them (default converged: L-BFGS); "
                        "with any other than converged alone, rows are keyed <probe>/<row>")
    p.add_argument("--control", action="store_true",
                   help="also train each probe on the control task (Hewitt & Liang 2019): control and selectivity")
    p.add_argument("--seeds", default="1", help="comma list: control-label draws and Adam-probe seeds (mean ± sd)")
    p.add_argument("--hidden", type=int, default=1000, help="mlp1/mlp2 hidden units (default 1000, the papers')")
    p.add_argument("--rank", type=int, default=1000, help="linear probe's rank bound (default 1000, the papers')")
    p.add_argument("--dropout", type=float, default=0.0, help="Adam probes' dropout (default 0, the papers')")
    p.add_argument("--weight-decay", type=float, default=0.0, help="Adam probes' weight decay (default 0)")
    p.add_argument("--max-epochs", type=int, default=40, help="Adam probes' epoch cap (default 40)")
    p.add_argument("--batch-sentences", type=_positive_int, default=20, help="sentences per Adam step (default 20)")
    add_random_init_arguments(p)
    p.add_argument("--rows", default=None,
                   help="probe only these rows, a comma list of layer_<k> / average / glove (default: every row)")


def _split_paths(directory: Path) -> dict[str, str]:
    paths = {}
    for split in ("train", "dev", "test"):
        found = [directory / f"en_ewt-ud-{split}.conllu{ext}" for ext in ("", ".gz")]
        found = [p for p in found if p.exists()]
        if not found:
            raise DataError(f"{directory}: no en_ewt-ud-{split}.conllu(.gz) (expected a UD English-EWT directory)")
        paths[split] = str(found[0])
    return paths


def read(args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    """The three splits, the training split cut to ``--max-train-sentences``."""
    from elmo_bench.tasks.pos.reader import read_conllu  # lazy: torch

    splits = {s: read_conllu(p, args.tag_column, s) for s, p in _split_paths(Path(args.data_dir)).items()}
    if args.max_train_sentences:
        splits["train"] = splits["train"][: args.max_train_sentences]
    if getattr(args, "max_dev_sentences", None):
        splits["dev"] = splits["dev"][: args.max_dev_sentences]
    return splits


def start_probe_run(args: argparse.Namespace) -> float:
    """What every UD probe command does first: logging, ``--random-init`` refused for an encoder it cannot randomise
    (before anything is read), ``--threads``; returns the start time."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    import torch  # lazy: torch

    from elmo_bench.encoders.random_init import check_random_init  # lazy: torch

    check_random_init(args.encoder, args.random_init)
    torch.set_num_threads(args.threads)
    return time.perf_counter()


def probe_encoder(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The encoder the command line asks for (``--random-init``: its random twin), on ``--device``, and the record
    every probe command stores of it (without the cache's timing)."""
    from elmo_bench.base.device import resolve_device  # lazy: torch
    from elmo_bench.encoders.cli_options import encoder_from_args, encoder_info  # lazy: torch
    from elmo_bench.encoders.protocol import moved  # lazy: torch
    from elmo_bench.encoders.random_init import check_random_init, randomise  # lazy: torch

    check_random_init(args.encoder, args.random_init)
    encoder = randomise(encoder_from_args(args), args.random_init, args.random_seed)
    encoder = moved(encoder, resolve_device(args.device, "--device"))
    info = encoder_info(encoder)
    record = {"hash": info["hash"], "layers": info["layers"], "dim": info["dim"], "encoder": info["encoder"]}
    if args.encoder == "bilm":
        record.update(options=args.options, weights=args.weights)
    if args.random_init:
        record.update(random_init=args.random_init, random_seed=args.random_seed,
                      **({"trained_hash": info["trained_hash"]} if info.get("trained_hash") else {}))
    return encoder, record


def bilm_features(args: argparse.Namespace, splits: dict[str, list[dict[str, Any]]], progress: bool):
    """{split: (n_tokens, L+1, dim)} from the activation cache (computed once), and the encoder's identity."""
    from elmo_bench.encoders.cache import ActivationCache, check_first_sentence  # lazy: torch
    from elmo_bench.probe.pos import layer_features  # lazy: torch

    encoder, record = probe_encoder(args)
    check_first_sentence(encoder, [ex["tokens"] for ex in splits["train"]], "the first training sentence (UD EWT)")
    cache = ActivationCache(args.cache_dir, encoder, progress=progress)
    features = {}
    for split, examples in splits.items():
        layers = cache.layers([ex["tokens"] for ex in examples], name=f"pos/{split}")
        features[split] = layer_features(layers, len(examples))
    return features, {**record, "seconds_in_bilm": cache.seconds_in_bilm}


def _grid(text: str) -> list[float]:
    try:
        grid = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise SystemExit(f"elmo-bench probe-pos: --l2-grid expects comma-separated numbers, found {text!r}")
    if not grid or any(v < 0 for v in grid):
        raise SystemExit(f"elmo-bench probe-pos: --l2-grid expects non-negative numbers, found {text!r}")
    return grid


def _views(args: argparse.Namespace, splits, layers, bilm) -> dict:
    """{row: {split: (n_tokens, dim)}}: each layer, their average and (unless --no-glove) GloVe."""
    from elmo_bench.probe.pos import SPLITS, glove_features  # lazy: torch

    views = {f"layer_{k}": {s: layers[s][:, k] for s in SPLITS} for k in range(bilm["layers"])}
    views["average"] = {s: layers[s].mean(axis=1) for s in SPLITS}
    wanted = set(views) | ({"glove"} if not args.no_glove else set())
    if args.rows is not None:
        wanted = {r.strip() for r in args.rows.split(",") if r.strip()}
        unknown = sorted(wanted - set(views) - {"glove"})
        if unknown or not wanted:
            raise ConfigError(f"--rows expected a comma list of {', '.join([*views, 'glove'])}, found {args.rows!r}")
        views = {k: v for k, v in views.items() if k in wanted}
    if "glove" in wanted and not args.no_glove:
        vectors, dim = load_glove({w for ex in (e for s in SPLITS for e in splits[s]) for w in ex["tokens"]})
        views["glove"] = {s: glove_features(splits[s], vectors, dim) for s in SPLITS}
    return views


def probe_pos_main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    import torch

    from elmo_bench.base.device import resolve_device  # lazy: torch
    from elmo_bench.encoders.random_init import check_random_init  # lazy: torch
    from elmo_bench.probe.pos import SPLITS, baseline_accuracy, probe_features, tag_ids  # lazy: torch
    from elmo_bench.probe.pos_controls import settings_from_args  # lazy: torch

    grid = _grid(args.l2_grid)
    settings = settings_from_args(args, grid)            # every bad flag refused before anything is read or written
    check_random_init(args.encoder, args.random_init)
    device = resolve_device(args.device, "--device")
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    splits = read(args)
    labels = sorted({t for ex in splits["train"] for t in ex["tags"]})
    y = {s: tag_ids(splits[s], labels) for s in SPLITS}
    layers, bilm = bilm_features(args, splits, not args.no_progress)
    views = _views(args, splits, layers, bilm)
    baseline = {s: baseline_accuracy(splits["train"], splits[s]) for s in ("dev", "test")}
    head = {"data": "ud_ewt_pos", "tag_column": args.tag_column, "train_sentences": len(splits["train"]),
            **{f"{s}_tokens": int(len(y[s])) for s in SPLITS}, "bilm": bilm["hash"]}
    if settings.probes != ["converged"] or settings.control or args.random_init:   # records the report sets apart
        from elmo_bench.probe.pos_probe_results import probe_and_write  # lazy: torch

        print(json.dumps(probe_and_write(args, settings, splits, labels, views, baseline, bilm, head, device, started)))
        return 0
    rows = {}
    for name, features in views.items():
        log.info("probe %s: %s features", name, features["train"].shape)
        rows[name] = probe_features(features, y, len(labels), grid, args.max_iter, args.tol)
    summary = {
        **head,
        "test": {**{n: round(r.test, 2) for n, r in rows.items()}, "most_frequent_tag": round(baseline["test"], 2)},
        "dev": {**{n: round(r.dev, 2) for n, r in rows.items()}, "most_frequent_tag": round(baseline["dev"], 2)},
        "l2": {n: r.l2 for n, r in rows.items()},
        "converged": {n: r.converged for n, r in rows.items()},
    }
    if args.out:
        write_results(Path(args.out), args, splits, rows, baseline, bilm, time.perf_counter() - started)
    print(json.dumps(summary))
    return 0


def write_results(out: Path, args: argparse.Namespace, splits, rows, baseline, bilm, seconds: float) -> None:
    """OUT/results.json in the engine's schema (task ``pos_probe``), one metric per row and split."""
    metrics = {split: {**{f"{n}_accuracy": getattr(r, split) for n, r in rows.items()},
                       "most_frequent_tag_accuracy": baseline[split]} for split in ("dev", "test")}
    config = dict(vars(args))
    config["choices"] = {"task": "pos_probe", "data": "ud_ewt_pos", "bilm": bilm_name(args.options), "embedder": "elmo"}
    full = len(splits["train"]) if not args.max_train_sentences else None
    out.mkdir(parents=True, exist_ok=True)
    RunRecord(
        task="pos_probe", embedder="elmo", seed=0, config=config,
        data={"name": "ud_ewt_pos", "fraction": 1.0, "train_sentences": len(splits["train"]),
              "all_train_sentences": full, "tag_column": args.tag_column},
        metrics=metrics, main_metric="layer_1_accuracy",
        probes={n: {**r.summary(), "l2_path": r.path} for n, r in rows.items()},
        mixes={}, elmo=None, epochs={"run": 0, "best": None, "history": []},
        timings={"total_seconds": seconds, "bilm_seconds": bilm["seconds_in_bilm"]},
        bilm={"name": bilm_name(args.options), **{k: v for k, v in bilm.items()
                                                    if k not in ("seconds_in_bilm", "encoder")}}
        if args.encoder == "bilm" else None,
        encoder=bilm["encoder"],
        git_commit=git_commit(REPO),
    ).write(out / RESULTS_FILE)
