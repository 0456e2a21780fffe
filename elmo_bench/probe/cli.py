"""``elmo-bench probe-wsd``: the WSD probe of every biLM layer on the Raganato evaluation sets (paper Table 5).

Writes ``OUT/keys/<set>.<view>.key`` (one predicted key per instance, the framework's answer format, scorable with
``elmo-bench score wsd GOLD PRED``) and ``OUT/results.json`` in the engine's schema: task "wsd", metrics
``{set: {"layer_0_f1": F, ..., "average_f1": F, "mfs_f1": F, plus _precision / _recall}}`` in percent.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Sequence

from elmo_bench.atomic import atomic_write_text

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "wsd"
DEFAULT_SEMCOR = DATA / "semcor3.0_google_original_format"
DEFAULT_EVAL_ROOT = DATA / "WSD_Evaluation_Framework" / "Evaluation_Datasets"
log = logging.getLogger("elmo_bench.probe.wsd")


def _parser() -> argparse.ArgumentParser:
    from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS
    from elmo_bench.probe.wsd_data import EVAL_SETS

    p = argparse.ArgumentParser(prog="elmo-bench probe-wsd", description=__doc__.splitlines()[0])
    p.add_argument("--options", default=str(DEFAULT_OPTIONS), help="biLM options.json (default: the shipped biLM)")
    p.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="biLM weights.hdf5 (default: the shipped biLM)")
    p.add_argument("--semcor", default=str(DEFAULT_SEMCOR), help="SemCor 3.0 tagfiles directory")
    p.add_argument("--eval-root", default=str(DEFAULT_EVAL_ROOT), help="the framework's Evaluation_Datasets directory")
    p.add_argument("--sets", default=",".join(EVAL_SETS), help="comma-separated evaluation sets")
    p.add_argument("--max-train-sentences", type=int, default=None,
                   help="embed only the first N SemCor sentences (most-frequent-sense counts still use all)")
    p.add_argument("--cache-dir", default=str(REPO / ".cache" / "activations"), help="activation cache directory")
    p.add_argument("--max-segment", type=int, default=256)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    p.add_argument("--no-wordnet", action="store_true", help="never use WordNet's first sense for unseen lemmas")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", required=True, help="output directory (keys/ and results.json)")
    return p


def _bilm_name(options: str) -> str:
    from elmo_bench.bilm.default import DEFAULT_OPTIONS

    if Path(options).resolve() == Path(DEFAULT_OPTIONS).resolve():
        return "shipped"
    return "fixture" if "elmo_fixtures" in str(options) else "custom"


def probe_wsd_main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    import torch

    from elmo_bench.bilm.weights import bilm_identity, load_bilm
    from elmo_bench.cache import ActivationCache
    from elmo_bench.probe import wsd, wsd_data
    from elmo_bench.probe.wsd_metric import score
    from elmo_bench.results import SCHEMA_VERSION, git_commit, write_results

    started = time.perf_counter()
    timings: dict[str, float] = {}
    torch.set_num_threads(max(1, args.threads))
    progress = not args.no_progress
    sets = [s for s in args.sets.split(",") if s]
    out = Path(args.out)
    (out / "keys").mkdir(parents=True, exist_ok=True)

    bilm = load_bilm(args.options, args.weights)
    bilm_id = bilm_identity(args.options, args.weights)
    cache = ActivationCache(args.cache_dir, bilm, bilm_id, max_segment=args.max_segment, progress=progress)

    semcor = wsd_data.read_semcor(args.semcor, progress=progress)
    train = semcor[: args.max_train_sentences] if args.max_train_sentences else semcor
    mfs = wsd.most_frequent_senses(wsd.sense_counts(semcor))
    timings["read_seconds"] = time.perf_counter() - started

    t0 = time.perf_counter()
    train_layers = cache.layers(wsd_data.token_lists(train), name="wsd/semcor")
    centroids = wsd.build_centroids(train, train_layers, progress)
    timings["train_seconds"] = time.perf_counter() - t0
    wordnet = None if args.no_wordnet else wsd.load_wordnet_first_sense()

    t1 = time.perf_counter()
    metrics: dict[str, dict[str, float]] = {}
    answered: dict[str, dict[str, int]] = {}
    instances: dict[str, int] = {}
    for name in sets:
        sentences, gold, _ = wsd_data.read_eval_set(args.eval_root, name)
        layers = cache.layers(wsd_data.token_lists(sentences), name=f"wsd/{name}")
        predictions, how = wsd.disambiguate(centroids, sentences, layers, mfs, wordnet, progress)
        instances[name], answered[name] = len(gold), dict(how)
        metrics[name] = {}
        for view, predicted in predictions.items():
            order = [span.id for s in sentences for span in s.spans if span.id in predicted]
            atomic_write_text(out / "keys" / f"{name}.{view}.key", "".join(f"{i} {predicted[i]}\n" for i in order))
            for metric, value in score(gold, {i: {k} for i, k in predicted.items()}).items():
                metrics[name][f"{view}_{metric}"] = value
    timings["eval_seconds"] = time.perf_counter() - t1
    timings["bilm_seconds"] = cache.seconds_in_bilm
    timings["total_seconds"] = time.perf_counter() - started

    top = f"layer_{bilm.num_layers - 1}_f1"
    config = {key: value for key, value in vars(args).items()}
    config["choices"] = {"task": "wsd", "data": "semcor", "bilm": _bilm_name(args.options), "embedder": "elmo"}
    results = {
        "schema": SCHEMA_VERSION,
        "task": "wsd",
        "embedder": "elmo",
        "seed": 0,  # deterministic: no training randomness
        "config": config,
        "data": {"name": "semcor", "fraction": len(train) / max(1, len(semcor)), "train_sentences": len(train),
                 "train_examples": sum(len(s.spans) for s in train), "train_senses": len(centroids.keys),
                 "semcor_sentences": len(semcor), "eval_instances": instances, "answered_by": answered,
                 "wordnet_fallback": wordnet is not None},
        "metrics": metrics,
        "main_metric": top,
        "views": centroids.views,
        "mixes": {},
        "elmo": None,
        "epochs": {"run": 0, "best": None, "history": []},
        "timings": timings,
        "bilm": {"name": _bilm_name(args.options), "options": args.options, "weights": args.weights, "hash": bilm_id,
                 "layers": bilm.num_layers, "dim": bilm.output_dim},
        "git_commit": git_commit(REPO),
    }
    write_results(out / "results.json", results)
    summary = {name: {k: round(v, 2) for k, v in m.items() if k.endswith("_f1")} for name, m in metrics.items()}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(probe_wsd_main(sys.argv[1:]))
