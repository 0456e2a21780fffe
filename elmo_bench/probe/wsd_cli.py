"""``elmo-bench probe-wsd``: the WSD probe of every biLM layer on the Raganato evaluation sets (paper Table 5).

Writes ``OUT/keys/<set>.<view>.key`` (one predicted key per instance, the framework's answer format, scorable with
``elmo-bench score wsd GOLD PRED``) and ``OUT/results.json`` in the engine's schema: task "wsd", metrics
``{set: {"layer_0_f1": F, ..., "average_f1": F, "mfs_f1": F, "wordnet_first_sense_f1": F, plus _precision,
_recall and _coverage (answered / total, percent)}}``; ``data.coverage`` holds the raw ``[answered, total]``.

The steps are separate functions (read → prepare layers → build the fallbacks → fit the centroids → evaluate →
write), so each can be tested and reused on its own.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.paths import CACHE_DIR, DATA_ROOT, REPO
from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS
from elmo_bench.encoders.segments import MAX_SEGMENT
from elmo_bench.probe import wsd, wsd_data
from elmo_bench.probe.wordnet import DEFAULT_SOURCE as DEFAULT_WORDNET
from elmo_bench.probe.wordnet import first_sense, open_wordnet
from elmo_bench.probe.wsd_data import EVAL_SETS, token_lists
from elmo_bench.probe.wsd_metric import score
from elmo_bench.records.run_record import RESULTS_FILE, RunRecord, git_commit

DATA = DATA_ROOT / "wsd"
DEFAULT_SEMCOR = DATA / "semcor3.0_google_original_format"
DEFAULT_EVAL_ROOT = DATA / "WSD_Evaluation_Framework" / "Evaluation_Datasets"
log = logging.getLogger("elmo_bench.probe.wsd")


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-wsd", description=__doc__.splitlines()[0])
    p.add_argument("--options", default=str(DEFAULT_OPTIONS), help="biLM options.json (default: the shipped biLM)")
    p.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="biLM weights.hdf5 (default: the shipped biLM)")
    from elmo_bench.encoders.cli_options import add_device_argument, add_encoder_arguments  # lazy: torch

    add_encoder_arguments(p)  # --encoder/--model/--pooling: any frozen encoder instead of the biLM
    add_device_argument(p)
    p.add_argument("--semcor", default=str(DEFAULT_SEMCOR), help="SemCor 3.0 tagfiles directory")
    p.add_argument("--eval-root", default=str(DEFAULT_EVAL_ROOT), help="the framework's Evaluation_Datasets directory")
    p.add_argument("--sets", default=",".join(EVAL_SETS), help="comma-separated evaluation sets")
    p.add_argument("--max-train-sentences", type=int, default=None,
                   help="embed only the first N SemCor sentences (default: all of SemCor; the most-frequent-sense "
                        "counts always use all)")
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--max-segment", type=int, default=MAX_SEGMENT)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    p.add_argument("--wordnet", default=str(DEFAULT_WORDNET),
                   help="WordNet 3.0 database directory (Debian: apt-get install -y wordnet-base)")
    p.add_argument("--wordnet-work", default=str(CACHE_DIR / "nltk_data"),
                   help="where the database is copied for nltk's reader (with a lexnames file)")
    p.add_argument("--no-wordnet", action="store_true",
                   help="no WordNet: no first-sense fallback for lemmas SemCor lacks and no WordNet baseline row")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", required=True, help="output directory (keys/ and results.json)")
    return p


def bilm_name(options: str) -> str:
    """The biLM's name in the probes' records: "shipped", "fixture" (the test biLM) or "custom"."""
    if Path(options).resolve() == Path(DEFAULT_OPTIONS).resolve():
        return "shipped"
    return "fixture" if "elmo_fixtures" in str(options) else "custom"


@dataclass
class WsdInputs:
    """All of SemCor, the part embedded for the centroids, and every evaluation set with its gold keys."""

    semcor: list[Any]
    train: list[Any]
    eval_sets: dict[str, tuple[list[Any], dict[str, set[str]]]]


@dataclass
class WsdLayers:
    train: Any
    eval_sets: dict[str, Any]
    bilm: dict[str, Any]
    seconds_in_bilm: float


@dataclass
class Fallbacks:
    mfs: dict[tuple[str, str], str]
    wordnet: Optional[Callable[[str, str], Optional[str]]]


@dataclass
class Evaluation:
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    keys: dict[str, dict[str, list[tuple[str, str]]]] = field(default_factory=dict)   # set → view → (id, key)
    answered_by: dict[str, dict[str, int]] = field(default_factory=dict)
    coverage: dict[str, dict[str, list[int]]] = field(default_factory=dict)            # set → view → [ans, total]


def read(args: argparse.Namespace, progress: bool) -> WsdInputs:
    semcor = wsd_data.read_semcor(args.semcor, progress=progress)
    train = semcor[: args.max_train_sentences] if args.max_train_sentences else semcor
    eval_sets = {}
    for name in [s for s in args.sets.split(",") if s]:
        sentences, gold, _ = wsd_data.read_eval_set(args.eval_root, name)
        eval_sets[name] = (sentences, gold)
    return WsdInputs(semcor, train, eval_sets)


def prepare_layers(args: argparse.Namespace, inputs: WsdInputs, progress: bool) -> WsdLayers:
    """The encoder's layers of the training sentences and of every evaluation set, through the activation cache."""
    from elmo_bench.base.device import resolve_device  # lazy: torch
    from elmo_bench.encoders.cache import ActivationCache, check_first_sentence  # lazy: torch
    from elmo_bench.encoders.cli_options import encoder_from_args, encoder_info  # lazy: torch
    from elmo_bench.encoders.protocol import moved  # lazy: torch

    encoder = moved(encoder_from_args(args), resolve_device(getattr(args, "device", "cpu"), "--device"))
    check_first_sentence(encoder, token_lists(inputs.train), "the first training sentence (probe-wsd)")
    record = encoder_info(encoder)
    cache = ActivationCache(args.cache_dir, encoder, max_segment=args.max_segment, progress=progress)
    train = cache.layers(token_lists(inputs.train), name="wsd/semcor")
    eval_layers = {name: cache.layers(token_lists(sentences), name=f"wsd/{name}")
                   for name, (sentences, _) in inputs.eval_sets.items()}
    info = {"name": bilm_name(args.options) if args.encoder == "bilm" else args.encoder, "hash": record["hash"],
            "layers": record["layers"], "dim": record["dim"], "encoder": record["encoder"]}
    if args.encoder == "bilm":
        info.update(options=args.options, weights=args.weights)
    return WsdLayers(train, eval_layers, info, cache.seconds_in_bilm)


def build(args: argparse.Namespace, inputs: WsdInputs) -> Fallbacks:
    """The SemCor most-frequent-sense table (all of SemCor) and WordNet's first sense (unless --no-wordnet)."""
    mfs = wsd.most_frequent_senses(wsd.sense_counts(inputs.semcor))
    wordnet = None if args.no_wordnet else first_sense(open_wordnet(args.wordnet, args.wordnet_work))
    return Fallbacks(mfs, wordnet)


def fit(inputs: WsdInputs, layers: WsdLayers, progress: bool) -> Any:
    """Sense centroids per view from the embedded SemCor sentences."""
    return wsd.build_centroids(inputs.train, layers.train, progress)


def evaluate(centroids: Any, inputs: WsdInputs, layers: WsdLayers, fallbacks: Fallbacks,
             progress: bool) -> Evaluation:
    """Every view and baseline on every set: scores (percent), keys in instance order, coverage."""
    result = Evaluation()
    for name, (sentences, gold) in inputs.eval_sets.items():
        predictions, how = wsd.disambiguate(centroids, sentences, layers.eval_sets[name], fallbacks.mfs,
                                            fallbacks.wordnet, progress)
        result.answered_by[name], result.metrics[name], result.keys[name], result.coverage[name] = dict(how), {}, {}, {}
        for view, predicted in predictions.items():
            order = [span.id for s in sentences for span in s.spans if span.id in predicted]
            result.keys[name][view] = [(i, predicted[i]) for i in order]
            for metric, value in score(gold, {i: {k} for i, k in predicted.items()}).items():
                result.metrics[name][f"{view}_{metric}"] = value
            answered = sum(1 for i in predicted if i in gold)
            result.coverage[name][view] = [answered, len(gold)]
            result.metrics[name][f"{view}_coverage"] = 100.0 * answered / len(gold) if gold else 0.0
    return result


def write(out: Path, args: argparse.Namespace, inputs: WsdInputs, layers: WsdLayers, centroids: Any,
          fallbacks: Fallbacks, evaluation: Evaluation, timings: dict[str, float]) -> dict[str, Any]:
    """OUT/keys/<set>.<view>.key and OUT/results.json; returns the printed summary (F1 and coverage)."""
    (out / "keys").mkdir(parents=True, exist_ok=True)
    for name, views in evaluation.keys.items():
        for view, pairs in views.items():
            atomic_write_text(out / "keys" / f"{name}.{view}.key", "".join(f"{i} {k}\n" for i, k in pairs))
    top = f"layer_{layers.bilm['layers'] - 1}_f1"
    config = {key: value for key, value in vars(args).items()}
    config["choices"] = {"task": "wsd", "data": "semcor", "bilm": layers.bilm["name"], "embedder": "elmo"}
    RunRecord(
        task="wsd",
        embedder="elmo",
        seed=0,  # deterministic: no training randomness
        config=config,
        data={"name": "semcor", "fraction": len(inputs.train) / max(1, len(inputs.semcor)),
              "train_sentences": len(inputs.train), "train_examples": sum(len(s.spans) for s in inputs.train),
              "train_senses": len(centroids.keys), "semcor_sentences": len(inputs.semcor),
              "eval_instances": {name: len(gold) for name, (_, gold) in inputs.eval_sets.items()},
              "answered_by": evaluation.answered_by, "coverage": evaluation.coverage,
              "wordnet_fallback": fallbacks.wordnet is not None},
        metrics=evaluation.metrics,
        main_metric=top,
        views=centroids.views,
        mixes={},
        elmo=None,
        epochs={"run": 0, "best": None, "history": []},
        timings=timings,
        bilm={k: v for k, v in layers.bilm.items() if k != "encoder"} if args.encoder == "bilm" else None,
        encoder=layers.bilm["encoder"],
        git_commit=git_commit(REPO),
    ).write(out / RESULTS_FILE)
    return {name: {k: round(v, 2) for k, v in m.items() if k.endswith(("_f1", "_coverage"))}
            for name, m in evaluation.metrics.items()}


def probe_wsd_main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    import torch

    from elmo_bench.base.device import resolve_device  # lazy: torch

    resolve_device(args.device, "--device")          # CUDA asked for where there is none: one line before any work
    torch.set_num_threads(max(1, args.threads))
    progress = not args.no_progress
    started = time.perf_counter()
    timings: dict[str, float] = {}
    inputs = read(args, progress)
    fallbacks = build(args, inputs)
    timings["read_seconds"] = time.perf_counter() - started
    t0 = time.perf_counter()
    layers = prepare_layers(args, inputs, progress)
    centroids = fit(inputs, layers, progress)
    timings["train_seconds"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    evaluation = evaluate(centroids, inputs, layers, fallbacks, progress)
    timings["eval_seconds"] = time.perf_counter() - t1
    timings["bilm_seconds"] = layers.seconds_in_bilm
    timings["total_seconds"] = time.perf_counter() - started
    summary = write(Path(args.out), args, inputs, layers, centroids, fallbacks, evaluation, timings)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(probe_wsd_main(sys.argv[1:]))
